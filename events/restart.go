package events

import "fmt"

// Restart event types: a request to restart chosen containers of running
// pods in place (OpenKruise's ContainerRecreateRequest, without a node
// agent), and how each request ended.
const (
	// ContainerRestartRequested: restart these containers of a pod, or of
	// every pod of a workload, in place on the bytes they run
	// (`inplace restart`, or a ConfigMap or Secret they use changed).
	ContainerRestartRequested = "dev.inplace.container.restart.requested.v1"
	// ContainerRestartSucceeded: every pod of the request restarted.
	ContainerRestartSucceeded = "dev.inplace.container.restart.succeeded.v1"
	// ContainerRestartFailed: the request ended with pods not restarted
	// (the counts and the reason).
	ContainerRestartFailed = "dev.inplace.container.restart.failed.v1"
)

// Failure policies of a restart request (Kruise's failurePolicy).
const (
	// FailurePolicyFail: a container that does not come back (crashes,
	// never starts, is not started for minStartedSeconds) fails the
	// request; nothing more is restarted.
	FailurePolicyFail = "Fail"
	// FailurePolicyIgnore: such a pod is counted failed and the request
	// goes on with the others.
	FailurePolicyIgnore = "Ignore"
)

// RestartStrategy is how a restart request is carried out; the fields are
// those of Kruise's ContainerRecreateRequest strategy.
type RestartStrategy struct {
	// FailurePolicy is Fail (default) or Ignore.
	FailurePolicy string `json:"failurePolicy,omitempty"`
	// OrderedRecreate restarts the containers one after the other, in the
	// order named: the next only once the previous is back.
	OrderedRecreate bool `json:"orderedRecreate,omitempty"`
	// UnreadyGracePeriodSeconds: the pod's readiness gate (inplace.dev/ready)
	// is False at least this long before the restart.
	UnreadyGracePeriodSeconds int `json:"unreadyGracePeriodSeconds,omitempty"`
	// MinStartedSeconds: a restarted container must stay started this long
	// to count as restarted.
	MinStartedSeconds int `json:"minStartedSeconds,omitempty"`
	// ActiveDeadlineSeconds bounds each pod's restart, from its patch.
	ActiveDeadlineSeconds int `json:"activeDeadlineSeconds,omitempty"`
	// TTLSecondsAfterFinished: how long the request's record stays in
	// inplace status after it finished.
	TTLSecondsAfterFinished int `json:"ttlSecondsAfterFinished,omitempty"`
}

// Ignore reports whether a failed pod lets the request go on.
func (s RestartStrategy) Ignore() bool { return s.FailurePolicy == FailurePolicyIgnore }

func (s RestartStrategy) validate(path string) error {
	switch s.FailurePolicy {
	case "", FailurePolicyFail, FailurePolicyIgnore:
	default:
		return fieldErr(path+".failurePolicy", fmt.Sprintf("%q is not Fail or Ignore", s.FailurePolicy))
	}
	for name, v := range map[string]int{"unreadyGracePeriodSeconds": s.UnreadyGracePeriodSeconds,
		"minStartedSeconds": s.MinStartedSeconds, "activeDeadlineSeconds": s.ActiveDeadlineSeconds,
		"ttlSecondsAfterFinished": s.TTLSecondsAfterFinished} {
		if v < 0 {
			return fieldErr(path+"."+name, "must not be negative")
		}
	}
	return nil
}

// RestartRequestData (container.restart.requested): restart these
// containers of a pod, or of every pod of a workload, in place.
type RestartRequestData struct {
	// Target is the workload (Deployment, StatefulSet, DaemonSet,
	// ReplicaSet) or the bare pod (Kind Pod).
	Target ObjectRef `json:"target"`
	// Containers are restarted (regular containers or native sidecars).
	Containers []string        `json:"containers"`
	Strategy   RestartStrategy `json:"strategy,omitzero"`
	// Reason is recorded on each pod (inplace.dev/restart-reason) and in
	// its Events ("config changed", a person's words).
	Reason string `json:"reason,omitempty"`
}

// Validate implements Validator.
func (d RestartRequestData) Validate() error {
	if err := validateRequest(d.Target, d.Containers, d.Reason); err != nil {
		return err
	}
	return d.Strategy.validate("data.strategy")
}

// RestartResultData (container.restart.succeeded / .failed): how a restart
// request ended, over every pod it concerned.
type RestartResultData struct {
	RequestID  string          `json:"requestID"`
	Target     ObjectRef       `json:"target"`
	Containers []string        `json:"containers"`
	Strategy   RestartStrategy `json:"strategy,omitzero"`
	Counts     Counts          `json:"counts"`
	Reason     string          `json:"reason,omitempty"`
	Message    string          `json:"message,omitempty"`
}

// Validate implements Validator.
func (d RestartResultData) Validate() error { return validateResult(d.RequestID, d.Target) }

// RestartPlan marks a plan (and a pod's state) as a restart: which request,
// with what strategy and why.
type RestartPlan struct {
	RequestID string          `json:"requestID"`
	Strategy  RestartStrategy `json:"strategy,omitzero"`
	Reason    string          `json:"reason,omitempty"`
}
