package rollout

import (
	"fmt"
	"slices"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// StartStep starts the current canary step's clock (its bake, then its
// measurements) once its pods are all in (Canaried). It reports whether r
// changed.
func StartStep(r *Rollout, now time.Time) bool {
	if !r.Canaried() || !r.Analysis.StepStartedAt.IsZero() {
		return false
	}
	r.Analysis.StepStartedAt, r.UpdatedAt = now, now
	return true
}

// Judge is what the current step's measurements say at now. ok is false
// when no step is being judged: no analysis, the step's pods still moving,
// or its clock not started (StartStep).
func Judge(r *Rollout, now time.Time) (v analysis.Verdict, ok bool) {
	if !r.Canaried() || r.Analysis.StepStartedAt.IsZero() {
		return analysis.Verdict{}, false
	}
	st, _ := r.Analysis.Current()
	return analysis.Evaluate(st, r.Analysis.StepStartedAt, r.Analysis.Measurements, now), true
}

// AddMeasurements appends ms to the current step's measurements when r is
// still at step, started at started (a measurement taken for a step that
// ended meanwhile is dropped). A measurement of a query at a time already
// kept is kept once. It reports whether r changed.
func AddMeasurements(r *Rollout, step int, started time.Time, ms []analysis.Measurement, now time.Time) bool {
	a := r.Analysis
	if !r.Canaried() || a.Step != step || !a.StepStartedAt.Equal(started) {
		return false
	}
	added := false
	for _, m := range ms {
		if !slices.ContainsFunc(a.Measurements, func(k analysis.Measurement) bool { return k.Query == m.Query && k.At.Equal(m.At) }) {
			a.Measurements, added = append(a.Measurements, m), true
		}
	}
	if added {
		r.UpdatedAt = now
	}
	return added
}

// EndStep records v, the current step's verdict. Passed moves to the next
// step (an approval step waits for an approver until approvalTTL from
// now); once every step passed, the remaining waves go as without
// analysis. Failed halts r with ReasonAnalysisFailed, Inconclusive with
// ReasonAnalysisInconclusive: nothing more is promoted. It reports whether
// r changed.
func EndStep(r *Rollout, v analysis.Verdict, inputID string, approvalTTL time.Duration, now time.Time) bool {
	a := r.Analysis
	if r.Phase != Running || a.Done() || v.Phase == analysis.Running {
		return false
	}
	a.Verdicts = append(a.Verdicts, StepVerdict{Step: a.Step, Phase: v.Phase, Reason: v.Reason, CanaryPods: r.CanaryPods(),
		StartedAt: a.StepStartedAt, At: now, Measurements: a.Measurements})
	if v.Phase != analysis.Passed {
		reason := events.ReasonAnalysisFailed
		if v.Phase == analysis.Inconclusive {
			reason = events.ReasonAnalysisInconclusive
		}
		Halt(r, reason, fmt.Sprintf("analysis step %d of %d: %s", a.Step+1, len(a.Spec.Steps), v.Reason), inputID, now)
		return true
	}
	a.next()
	r.UpdatedAt, r.ProgressAt = now, now
	if st, ok := a.Current(); ok && st.Approval {
		AwaitApproval(r, fmt.Sprintf("analysis step %d of %d asks for an approval (%d pods run %s)",
			a.Step+1, len(a.Spec.Steps), len(r.CanaryPods()), r.Target()), inputID, approvalTTL, now)
	}
	return true
}

// next moves to the next step, its clock and measurements fresh.
func (a *Analysis) next() {
	a.Step++
	a.StepStartedAt, a.Measurements = time.Time{}, nil
}

// approved passes an approval step the rollout waited at.
func (a *Analysis) approved(by string, now time.Time) {
	if st, ok := a.Current(); ok && st.Approval {
		a.Verdicts = append(a.Verdicts, StepVerdict{Step: a.Step, Phase: analysis.Passed, Reason: "approved by " + by, At: now})
		a.next()
	}
}

// Back is the undo of r's canary after a failed analysis step, or after
// an approval step of its analysis was rejected or expired: an
// upgrade.requested taking the pods r moved back to the images the record
// says they ran before (the `inplace undo` push, which compute-spec checks
// against the record like any other). ok is false when r ended otherwise
// or moved no pod.
func Back(r *Rollout) (push events.UpgradeRequestData, ok bool, err error) {
	if !r.canaryRefused() || !r.moved() {
		return events.UpgradeRequestData{}, false, nil
	}
	back, err := UndoOf(r)
	if err != nil {
		return events.UpgradeRequestData{}, false, err
	}
	image, err := pushedOf(back.Ref())
	if err != nil {
		return events.UpgradeRequestData{}, false, fmt.Errorf("the record's image %s: %w", back.Ref(), err)
	}
	ref := r.Workload
	return events.UpgradeRequestData{ImagePushedData: image, Target: &ref, Containers: back.Containers,
		AllowOlder: true, Undo: r.UpgradeID}, true, nil
}

// OriginAnalysis is the origin of the undo push a failed analysis makes.
const OriginAnalysis = "analysis"

func pushedOf(image string) (events.ImagePushedData, error) {
	ref, err := imageref.Parse(image)
	if err != nil {
		return events.ImagePushedData{}, err
	}
	return events.ImagePushedData{Registry: ref.Registry, Repository: ref.Repository, Tag: ref.Tag, Digest: ref.Digest,
		Origin: OriginAnalysis}, nil
}

// canaryRefused reports whether r's canary was turned down: its analysis
// failed, or an approval step of its analysis was rejected or expired.
func (r *Rollout) canaryRefused() bool {
	switch r.Phase {
	case Halted:
		return r.Reason == events.ReasonAnalysisFailed
	case Rejected:
		return r.Analysis != nil
	}
	return false
}

// EndedBy is the id of the input whose handling ended r: the one that
// halted it, or the one that decided its approval (a rejection, an
// expiry); "" while it runs.
func (r *Rollout) EndedBy() string {
	switch {
	case r.Phase == Halted:
		return r.HaltedBy
	case r.Phase == Rejected && r.Approval != nil:
		return r.Approval.DecidedBy
	}
	return ""
}
