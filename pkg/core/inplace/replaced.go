package inplace

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
)

// Replaced is the upgrade whose state a patch wrote over, and how it stood
// then as the pod showed it (AccountOf): a verify timer of that upgrade
// that comes back after the next one took the pod reports that end (the
// same event, by id, as when it ended) rather than a supersession. Only
// the last replaced upgrade is kept, not a history.
type Replaced struct {
	UpgradeID string `json:"upgradeID"`
	// Phase is its end (Succeeded, also for a completion check passed
	// with no end written; RolledBack; Failed), or the phase it was in
	// (Patched, RollingBack) when it had not ended: it was superseded.
	Phase   Phase  `json:"phase"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// PatchedAt is when it was patched; FinishedAt when it ended, or, when
	// its end was not written, when the next upgrade took the pod (it had
	// ended by then).
	PatchedAt  time.Time `json:"patchedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// AsState is the replaced upgrade's end as a state (no containers).
func (r Replaced) AsState() *State {
	return &State{UpgradeID: r.UpgradeID, Phase: r.Phase, Reason: r.Reason, Message: r.Message,
		PatchedAt: r.PatchedAt, FinishedAt: r.FinishedAt}
}

// replacedOn is what a patch of upgradeID written at now replaces on pod:
// nil when the pod has no state (or an unreadable one), or this upgrade's
// own, or one whose written end the pod's spec does not bear out.
func replacedOn(pod *corev1.Pod, upgradeID string, now time.Time) *Replaced {
	prev, err := ParseState(pod)
	if err != nil || prev == nil || prev.UpgradeID == upgradeID {
		return nil
	}
	r := &Replaced{UpgradeID: prev.UpgradeID, Phase: prev.Phase, Reason: prev.Reason, Message: prev.Message,
		PatchedAt: prev.PatchedAt}
	shown := pod
	if GateHeldFor(pod, upgradeID) {
		// This upgrade's drain closed the gate, and it closes only a gate
		// that is not False already: it was open until then.
		shown = gateOpen(pod)
	}
	a := AccountOf(shown, PlanFromState(pod, prev))
	switch {
	case a.Stage == StageEnded || a.Stage == StagePassed:
		r.Phase, r.Reason, r.Message, r.FinishedAt = phaseOf(a.Type), a.Reason, a.Message, a.FinishedAt
		if r.FinishedAt.IsZero() {
			r.FinishedAt = now.UTC()
		}
	case !prev.Phase.Active():
		return nil // an end the spec does not bear out: nothing to tell
	}
	return r
}

// gateOpen is a copy of pod with its gate condition True.
func gateOpen(pod *corev1.Pod) *corev1.Pod {
	p := pod.DeepCopy()
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == ReadinessGate {
			p.Status.Conditions[i].Status = corev1.ConditionTrue
		}
	}
	return p
}

// phaseOf is the final phase of an outcome type.
func phaseOf(typ string) Phase {
	switch typ {
	case events.UpgradeSucceeded:
		return PhaseSucceeded
	case events.UpgradeRolledBack:
		return PhaseRolledBack
	}
	return PhaseFailed
}

// EndBefore is what st, the state of the upgrade that took the pod, records
// of plan's upgrade, the one it replaced (nil: it replaced another, or
// none), and "" when that is an end the pod bears out, else why it is not
// one. The record is a claim on the pod like the rest of the annotation:
// it must name a final phase, and the images plan's containers ran when
// the next upgrade took the pod (the previous image st records for a
// container it changed, the spec's for one it left alone) must be the
// targets after a success, and after a rollback the previous images for
// at least one container (those the patch did not change stay on their
// target).
func EndBefore(pod *corev1.Pod, st *State, plan events.Plan) (*Replaced, string) {
	r := st.Replaced
	if r == nil || r.UpgradeID != plan.UpgradeID || r.UpgradeID == st.UpgradeID {
		return nil, ""
	}
	switch r.Phase {
	case PhaseSucceeded, PhaseRolledBack, PhaseFailed:
	case PhasePatched, PhaseRollingBack:
		return r, fmt.Sprintf("upgrade %s was still %s when upgrade %s took the pod", r.UpgradeID, r.Phase, st.UpgradeID)
	default:
		return r, fmt.Sprintf("upgrade %s's state records upgrade %s in phase %q", st.UpgradeID, r.UpgradeID, r.Phase)
	}
	back := false
	for _, cp := range plan.Containers {
		ran, ok := ranWhenReplaced(pod, st, cp.Name)
		switch {
		case !ok:
			return r, "container " + cp.Name + " is gone"
		case r.Phase == PhaseSucceeded && ran != cp.ToImage,
			r.Phase == PhaseRolledBack && ran != cp.ToImage && ran != cp.FromImage:
			return r, fmt.Sprintf("upgrade %s's state says upgrade %s %s, but container %s ran %s when it took the pod",
				st.UpgradeID, r.UpgradeID, r.Phase, cp.Name, ran)
		}
		back = back || ran == cp.FromImage
	}
	if r.Phase == PhaseRolledBack && !back {
		return r, fmt.Sprintf("upgrade %s's state says upgrade %s %s, but every container ran its target when it took the pod",
			st.UpgradeID, r.UpgradeID, r.Phase)
	}
	return r, ""
}

// ranWhenReplaced is the image container name ran when the upgrade st
// records took the pod.
func ranWhenReplaced(pod *corev1.Pod, st *State, name string) (string, bool) {
	if c := st.Container(name); c != nil {
		return c.PreviousImage, true
	}
	c, ok := findContainer(&pod.Spec, "/spec", name)
	return c.Image, ok
}
