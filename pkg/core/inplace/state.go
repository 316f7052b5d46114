package inplace

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Phase is where a pod's upgrade stands.
type Phase string

// Phases of State.
const (
	PhasePatched     Phase = "Patched"
	PhaseSucceeded   Phase = "Succeeded"
	PhaseFailed      Phase = "Failed"
	PhaseRollingBack Phase = "RollingBack"
	PhaseRolledBack  Phase = "RolledBack"
)

// Active reports whether the upgrade is still moving (patched or rolling
// back) rather than finished.
func (p Phase) Active() bool { return p == PhasePatched || p == PhaseRollingBack }

// State is the JSON in a pod's inplace.dev/state annotation: enough to check
// the kubelet's progress and to roll back without any other record.
type State struct {
	UpgradeID string `json:"upgradeID"`
	// Target is the pushed reference that caused the upgrade.
	Target string `json:"target"`
	Phase  Phase  `json:"phase"`
	Reason string `json:"reason,omitempty"`
	// Message explains Reason for people (the kubelet's message of a
	// failure that caused a rollback).
	Message    string    `json:"message,omitempty"`
	PatchedAt  time.Time `json:"patchedAt,omitzero"`
	RollbackAt time.Time `json:"rollbackAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Containers are the containers the patch changed.
	Containers []ContainerState `json:"containers"`

	// The rest of the plan, so that a function holding only the pod (verify
	// on pod.updated) can rebuild it with PlanFromState.
	Owner           events.ObjectRef `json:"owner,omitzero"`
	Wave            int              `json:"wave,omitempty"`
	GraceSeconds    int              `json:"graceSeconds,omitempty"`
	VerifySeconds   int              `json:"verifySeconds,omitempty"`
	MinReadySeconds int              `json:"minReadySeconds,omitempty"`
	Prepull         bool             `json:"prepull,omitempty"`
	ReadinessGate   bool             `json:"readinessGate,omitempty"`
	PlannedAt       time.Time        `json:"plannedAt,omitzero"`
	// Restart is set when the change restarts containers on the bytes they
	// run (a restart request): no rollback, the image string is not judged.
	Restart *events.RestartPlan `json:"restart,omitempty"`
	// Resize is set when the change is a resize of CPU and memory (each
	// container's Resources say from what to what): images stay.
	Resize *events.ResizePlan `json:"resize,omitempty"`
	// Attempt is the plan's attempt that patched the pod (events.Plan).
	Attempt int `json:"attempt,omitempty"`
	// StepEvents: the plan's Normal Events are one on the workload for its
	// step (events.Plan).
	StepEvents bool `json:"stepEvents,omitempty"`
	// Replaced is the upgrade whose state this one's patch wrote over, and
	// how it stood then (EndBefore reads it).
	Replaced *Replaced `json:"replaced,omitempty"`
}

// ContainerState is one changed container, as it was before the patch.
type ContainerState struct {
	Name                 string `json:"name"`
	Sidecar              bool   `json:"sidecar,omitempty"`
	PreviousImage        string `json:"previousImage"`
	PreviousImageID      string `json:"previousImageID,omitempty"`
	PreviousContainerID  string `json:"previousContainerID,omitempty"`
	PreviousRestartCount int32  `json:"previousRestartCount"`
	TargetImage          string `json:"targetImage"`
	TargetDigest         string `json:"targetDigest,omitempty"`
	PullPolicy           string `json:"pullPolicy,omitempty"`
	// RollbackContainerID and RollbackRestartCount are the container's
	// status when the rollback was patched, to see it restart again.
	RollbackContainerID  string `json:"rollbackContainerID,omitempty"`
	RollbackRestartCount int32  `json:"rollbackRestartCount,omitempty"`
	// Resources are, for a resize, the container's resources before and
	// after: a rollback resizes it back to From.
	Resources *events.ResizeResources `json:"resources,omitempty"`
}

// Container returns the named container's entry, or nil.
func (s *State) Container(name string) *ContainerState {
	for i := range s.Containers {
		if s.Containers[i].Name == name {
			return &s.Containers[i]
		}
	}
	return nil
}

// Encode is the annotation value.
func (s State) Encode() string {
	b, err := json.Marshal(s)
	if err != nil { // only plain strings, numbers and times: cannot happen
		panic("inplace: encode state: " + err.Error())
	}
	return string(b)
}

// ParseState reads the pod's inplace.dev/state annotation: nil when absent, a
// permanent error naming the annotation when it is not a State. The State
// is the caller's own (a copy of the one decoded once per annotation value).
func ParseState(pod *corev1.Pod) (*State, error) {
	raw, ok := pod.Annotations[StateAnnotation]
	if !ok {
		return nil, nil
	}
	s, ok, err := states.parse(raw)
	if err != nil {
		return nil, settle.Permanentf("pod %s/%s: annotation %s: %w", pod.Namespace, pod.Name, StateAnnotation, err)
	}
	if !ok {
		return nil, settle.Permanentf("pod %s/%s: annotation %s: upgradeID and phase are required", pod.Namespace, pod.Name, StateAnnotation)
	}
	return s, nil
}
