package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/inplace-dev/inplace/events"
)

// anyTarget stands for the workload while a request's flags are checked,
// before the cluster is asked what KIND/NAME is.
var anyTarget = events.ObjectRef{Kind: "Pod", Namespace: "default", Name: "flags"}

// flagged names the flag behind the field of a request that its own
// validation refused (fields maps "data.cpu" to "--cpu"; "data.containers[1]"
// is looked up as "data.containers"); other errors are returned as they are.
func flagged(err error, fields map[string]string) error {
	var fe *events.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	field, _, _ := strings.Cut(fe.Field, "[")
	if flag, ok := fields[field]; ok {
		return fmt.Errorf("%s: %s", flag, fe.Reason)
	}
	return err
}

// restartFields are the flags of a restart request's fields.
var restartFields = map[string]string{
	"data.containers":                         "-c/--container",
	"data.reason":                             "--reason",
	"data.strategy.failurePolicy":             "--failure-policy",
	"data.strategy.unreadyGracePeriodSeconds": "--unready-grace-seconds",
	"data.strategy.minStartedSeconds":         "--min-started-seconds",
	"data.strategy.activeDeadlineSeconds":     "--active-deadline-seconds",
	"data.strategy.ttlSecondsAfterFinished":   "--ttl-seconds-after-finished",
}

// resizeFields are the flags of a resize request's fields.
var resizeFields = map[string]string{
	"data.containers":      "-c/--container",
	"data.cpu":             "--cpu",
	"data.memory":          "--memory",
	"data.deadlineSeconds": "--deadline",
	"data.reason":          "--reason",
}
