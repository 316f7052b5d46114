package rollout

import (
	"time"

	"github.com/inplace-dev/inplace/pkg/core/analysis"
)

// Analysis is a rollout's canary analysis (the workload's
// inplace.dev/analysis), as the record keeps it: the spec as parsed when
// the rollout began (a later edit of the annotation does not change a
// running rollout), the step it is at and that step's measurements.
// Everything a process needs to resume the analysis after a restart is
// here.
type Analysis struct {
	Spec analysis.Spec `json:"spec"`
	// Source says where the spec was read from: "annotation" or
	// "configmap:<name>/<key>".
	Source string `json:"source,omitempty"`
	// Step indexes the current step of Spec.Steps; len(Spec.Steps) once
	// every step passed (the remaining waves go as without analysis).
	Step int `json:"step"`
	// StepStartedAt is when the current canary step's pods had all
	// succeeded: its bake and its measurements count from then. Zero while
	// the step's pods are still moving.
	StepStartedAt time.Time `json:"stepStartedAt,omitzero"`
	// Measurements are the current step's.
	Measurements []analysis.Measurement `json:"measurements,omitempty"`
	// Verdicts are the finished steps' verdicts, oldest first.
	Verdicts []StepVerdict `json:"verdicts,omitempty"`
	// RolledBack names the canary pods a failed step rolled back in place.
	RolledBack []string `json:"rolledBack,omitempty"`
}

// StepVerdict is how one analysis step ended.
type StepVerdict struct {
	Step  int            `json:"step"`
	Phase analysis.Phase `json:"phase"`
	// Reason says why, naming the query, the value and the threshold.
	Reason string `json:"reason,omitempty"`
	// CanaryPods are the pods that ran the new version in the step.
	CanaryPods []string  `json:"canaryPods,omitempty"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	At         time.Time `json:"at"`
	// Measurements are the step's measurements.
	Measurements []analysis.Measurement `json:"measurements,omitempty"`
}

// Done reports whether every step of the analysis passed.
func (a *Analysis) Done() bool { return a == nil || a.Step >= len(a.Spec.Steps) }

// Current is the step the analysis is at; ok is false once Done.
func (a *Analysis) Current() (analysis.Step, bool) {
	if a.Done() {
		return analysis.Step{}, false
	}
	return a.Spec.Steps[a.Step], true
}
