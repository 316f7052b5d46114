package rollout

import (
	"slices"
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

// CanaryPods are the pods of r on the new version, or moving to it, under
// r's upgrade: the canary of its analysis step. Sorted by name.
func (r *Rollout) CanaryPods() []string {
	var out []string
	for name, p := range r.Pods {
		if p.UpgradeID == r.UpgradeID && (p.State == InFlight || p.State == Succeeded) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// BaselinePods are the pods of r not moved yet (pending), by name.
func (r *Rollout) BaselinePods() []string {
	var out []string
	for name, p := range r.Pods {
		if p.State == Pending {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// canaryRoom is how many more pods planNext may put in flight while a
// canary step is active: the step's canary count (of the workload's pods)
// less the pods already moving or moved. Negative: no step bounds the
// wave (no analysis, or every step passed).
func canaryRoom(r *Rollout) int {
	st, ok := r.Analysis.Current()
	if !ok {
		return -1
	}
	moving := 0
	for _, p := range r.Pods {
		if p.State == InFlight || (p.State == Succeeded && p.UpgradeID == r.UpgradeID) {
			moving++
		}
	}
	return max(st.CanaryPods(len(r.Pods))-moving, 0)
}

// Canaried reports whether r's current canary step has its pods: none in
// flight, and as many moved as the step names (or no pod left to move).
// Its bake and measurements may start.
func (r *Rollout) Canaried() bool {
	st, ok := r.Analysis.Current()
	if !ok || st.Approval || r.Phase != Running {
		return false
	}
	pending := false
	for _, p := range r.Pods {
		switch p.State {
		case InFlight:
			return false
		case Pending:
			pending = true
		}
	}
	return canaryRoom(r) == 0 || !pending
}
