package computespec

import (
	"context"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// EventRestartRequested is the reason of the Event on a workload whose
// restart request was taken on.
const EventRestartRequested = "InPlaceRestartRequested"

// onRestart starts a restart request: each named container is switched to
// the other reference of the bytes it runs.
func (f *Function) onRestart(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	req, err := events.As[events.RestartRequestData](in)
	if err != nil {
		return nil, err
	}
	return f.onContainers(ctx, in, containerRequest{
		what: "restart", target: req.Target, containers: req.Containers, id: events.DeriveRestartID,
		record:  func(id string) rollout.Request { return rollout.NewRestart(id, req) },
		options: func(t controller.Target) rollout.Options { return restartOptions(t, req.Strategy) },
		reason:  EventRestartRequested, verb: "Restarting",
	})
}

// restartOptions are a restart's rollout settings: the workload's budget,
// the strategy's grace, deadline and minimum started time; no pre-pull (the
// bytes are on the node: the container runs them).
func restartOptions(t controller.Target, s events.RestartStrategy) rollout.Options {
	o := t.RolloutOptions()
	o.GraceSeconds, o.Prepull = s.UnreadyGracePeriodSeconds, false
	o.MinReadySeconds = max(o.MinReadySeconds, s.MinStartedSeconds)
	if s.ActiveDeadlineSeconds > 0 {
		o.VerifySeconds = s.ActiveDeadlineSeconds
	}
	return o
}
