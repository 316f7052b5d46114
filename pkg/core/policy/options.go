package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// The opt-in annotations, on a workload or a bare pod. Each comment says
// what the annotation takes and its default; docs/reference.md lists them.
const (
	// AnnotationPolicy opts the workload in and says which pushes qualify:
	// semver:major, semver:minor, semver:patch, semver:<range> (~1.25,
	// ">=1.2, <2"), glob:<pattern>, regexp:<re> (the whole tag), force, or
	// digest (a moving tag such as latest: upgrade when its digest
	// changes). Absent: not opted in, nothing is touched.
	AnnotationPolicy = "inplace.dev/policy"
	// AnnotationMaxUnavailable is how many pods may be upgrading (not
	// Ready) at once: a number or a percent of the desired replicas
	// (rounded down, at least 1); pods already NotReady count against it.
	// Default: the workload's own rollingUpdate.maxUnavailable, resolved as
	// its controller does (Deployment 25%, StatefulSet and DaemonSet 1),
	// else max-unavailable of config-inplace (1). `inplace plan` says which
	// applies.
	AnnotationMaxUnavailable = "inplace.dev/max-unavailable"
	// AnnotationGraceSeconds is the seconds between taking the pod out of
	// its endpoints (readiness gate False) and the patch. Default 0.
	AnnotationGraceSeconds = "inplace.dev/grace-seconds"
	// AnnotationPrepull: "true" puts the target image on the pod's node
	// before the patch, "false" does not. Default true.
	AnnotationPrepull = "inplace.dev/prepull"
	// AnnotationPaused "true" plans nothing new for the workload (resume
	// with inplace upgrade, or remove it).
	AnnotationPaused = "inplace.dev/paused"
	// AnnotationVerifySeconds is how long verify waits for the new
	// container to run and be Ready before it rolls the pod back. Default
	// 300.
	AnnotationVerifySeconds = "inplace.dev/verify-seconds"
	// AnnotationSyncUnderGitOps "true" lets the template sync change a
	// workload that Argo CD or Flux manages (by default it is left to Git).
	AnnotationSyncUnderGitOps = "inplace.dev/sync-under-gitops"
	// AnnotationPollInterval makes the poller ask the registry for the
	// tags the workload could move to, this often: a duration (30s, 5m; at
	// least 1s) or "off". Default: poll-interval of config-inplace (off).
	AnnotationPollInterval = "inplace.dev/poll-interval"
)

// MinPollInterval is the shortest poll interval accepted: a registry is
// not to be hammered.
const MinPollInterval = time.Second

// Defaults fill what the annotations leave out; start from StandardDefaults.
type Defaults struct {
	MaxUnavailable intstr.IntOrString
	GraceSeconds   int
	Prepull        bool
	VerifySeconds  int
	// PollInterval is how often the tags of a workload that says nothing
	// are polled; 0 polls none.
	PollInterval time.Duration
	// Approval is which pushes wait for an approver; "" is none.
	Approval Approval
}

// StandardDefaults: one pod at a time, no grace, pre-pull on, five minutes
// to verify.
func StandardDefaults() Defaults {
	return Defaults{MaxUnavailable: intstr.FromInt32(1), Prepull: true, VerifySeconds: 300, Approval: ApprovalNone}
}

// Options is the opt-in of one workload or bare pod.
type Options struct {
	// OptedIn is false when inplace.dev/policy is absent: touch nothing.
	OptedIn        bool
	Policy         Policy
	MaxUnavailable intstr.IntOrString
	GraceSeconds   int
	Prepull        bool
	Paused         bool
	VerifySeconds  int
	// SyncUnderGitOps: sync the template even when a GitOps tool manages it.
	SyncUnderGitOps bool
	// PollInterval is how often the registry is asked for the tags the
	// workload could move to; 0 when it is not polled.
	PollInterval time.Duration
	// Approval is which pushes wait for an approver.
	Approval Approval
}

// FromAnnotations reads the opt-in annotations. Without inplace.dev/policy
// it returns Options{OptedIn: false} and no error, whatever else is set.
// Errors name the annotation and its value.
func FromAnnotations(ann map[string]string, d Defaults) (Options, error) {
	raw, ok := ann[AnnotationPolicy]
	if !ok {
		return Options{}, nil
	}
	p, err := Parse(raw)
	if err != nil {
		return Options{}, err
	}
	o := Options{OptedIn: true, Policy: p, MaxUnavailable: d.MaxUnavailable,
		GraceSeconds: d.GraceSeconds, Prepull: d.Prepull, VerifySeconds: d.VerifySeconds, PollInterval: d.PollInterval,
		Approval: d.Approval}
	if o.Approval == "" {
		o.Approval = ApprovalNone
	}
	if o.MaxUnavailable == (intstr.IntOrString{}) {
		o.MaxUnavailable = intstr.FromInt32(1)
	}
	if o.VerifySeconds <= 0 {
		o.VerifySeconds = 300
	}
	return o, readOptional(ann, &o)
}

func readOptional(ann map[string]string, o *Options) error {
	var err error
	if v, ok := ann[AnnotationMaxUnavailable]; ok {
		if o.MaxUnavailable, err = parseMaxUnavailable(v); err != nil {
			return err
		}
	}
	if v, ok := ann[AnnotationGraceSeconds]; ok {
		if o.GraceSeconds, err = parseInt(AnnotationGraceSeconds, v, 0); err != nil {
			return err
		}
	}
	if v, ok := ann[AnnotationVerifySeconds]; ok {
		if o.VerifySeconds, err = parseInt(AnnotationVerifySeconds, v, 1); err != nil {
			return err
		}
	}
	if v, ok := ann[AnnotationPrepull]; ok {
		if o.Prepull, err = parseBool(AnnotationPrepull, v); err != nil {
			return err
		}
	}
	if v, ok := ann[AnnotationPaused]; ok {
		if o.Paused, err = parseBool(AnnotationPaused, v); err != nil {
			return err
		}
	}
	if v, ok := ann[AnnotationPollInterval]; ok {
		if o.PollInterval, err = ParsePollInterval(AnnotationPollInterval, v); err != nil {
			return err
		}
	}
	if v, ok := ann[AnnotationApproval]; ok {
		if o.Approval, err = ParseApproval(AnnotationApproval, v); err != nil {
			return err
		}
	}
	o.SyncUnderGitOps, err = SyncUnderGitOps(ann)
	return err
}

// ParsePollInterval reads a poll interval: a Go duration of at least
// MinPollInterval, or "0" (or "off") for none. name is the annotation or key.
func ParsePollInterval(name, v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	if s == "0" || s == "off" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < MinPollInterval {
		return 0, annErr(name, v, fmt.Sprintf("want a duration of at least %s (\"30s\", \"5m\"), or \"off\"", MinPollInterval))
	}
	return d, nil
}

// SyncUnderGitOps reads inplace.dev/sync-under-gitops (absent: false).
func SyncUnderGitOps(ann map[string]string) (bool, error) {
	v, ok := ann[AnnotationSyncUnderGitOps]
	if !ok {
		return false, nil
	}
	return parseBool(AnnotationSyncUnderGitOps, v)
}

// parseMaxUnavailable accepts "3" or "25%". Zero is refused: an in-place
// restart cannot surge, so a budget of 0 would never let a pod move.
func parseMaxUnavailable(v string) (intstr.IntOrString, error) {
	s := strings.TrimSpace(v)
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(pct)
		if err != nil || n <= 0 || n > 100 {
			return intstr.IntOrString{}, annErr(AnnotationMaxUnavailable, v, "want a percentage from 1% to 100%")
		}
		return intstr.FromString(s), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return intstr.IntOrString{}, annErr(AnnotationMaxUnavailable, v,
			"want a number of pods ≥ 1 or a percentage (0 would never let a pod restart: in place cannot surge)")
	}
	return intstr.FromInt(n), nil
}

// Budget resolves MaxUnavailable against the desired replicas like the
// Deployment controller: a percentage rounds down, and the result is at
// least 1 so a small workload still moves.
func (o Options) Budget(replicas int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&o.MaxUnavailable, replicas, false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func parseInt(name, v string, minimum int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < minimum {
		return 0, annErr(name, v, fmt.Sprintf("want a whole number ≥ %d", minimum))
	}
	return n, nil
}

func parseBool(name, v string) (bool, error) {
	switch strings.TrimSpace(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, annErr(name, v, `want "true" or "false"`)
}

func annErr(name, value, why string) error {
	return fmt.Errorf("annotation %s: invalid value %q: %s", name, value, why)
}
