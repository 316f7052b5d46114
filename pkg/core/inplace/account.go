package inplace

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
)

// Stage is how far a plan went, as its pod shows it.
type Stage string

// Stages of Account.
const (
	// StageGone: the pod is deleted, being deleted, or replaced.
	StageGone Stage = "Gone"
	// StageNotPatched: the pod has no state of the plan's upgrade: not
	// reached yet, refused before the patch (a refusal writes nothing on
	// the pod but the gate it puts back), or superseded.
	StageNotPatched Stage = "NotPatched"
	// StageUpToDate: not patched, and every planned container is already
	// set to its target (someone else set it): patch-pod reports that a
	// success with nothing to do.
	StageUpToDate Stage = "UpToDate"
	// StageMoving: patched or rolling back, and not over.
	StageMoving Stage = "Moving"
	// StagePassed: patched, no end written, and the pod passes the
	// completion check with its gate (if any) open: a success with no gate
	// to open writes nothing, its end is on the bus and in the record.
	StagePassed Stage = "Passed"
	// StageEnded: the state's final phase, borne out by the spec (a
	// success sets the targets, a rollback the previous images).
	StageEnded Stage = "Ended"
)

// Account is what a pod shows became of a plan.
type Account struct {
	Stage Stage
	// Type is the outcome the pod shows (events.UpgradeSucceeded,
	// UpgradeFailed or UpgradeRolledBack) once Gone, Passed or Ended; empty
	// otherwise.
	Type string
	// Reason and Message say why (the state's, the completion check's).
	Reason, Message       string
	PatchedAt, FinishedAt time.Time
}

// AccountOf says what pod (nil: gone) shows became of plan, from the pod
// alone: its UID, its state annotation, its containers' spec images and,
// for an upgrade whose end is not written, the completion check (imageIDs,
// restartCount, readiness) and the gate. plan must be the rollout record's,
// not an input's: its targets are what a success must show.
func AccountOf(pod *corev1.Pod, plan events.Plan) Account {
	if r, gone := identity(pod, plan.Pod.UID); gone {
		return Account{Stage: StageGone, Type: events.UpgradeFailed, Reason: r.Reason, Message: r.Message}
	}
	st, err := ParseState(pod)
	switch {
	case err != nil:
		return notPatched(pod, plan, err.Error())
	case st == nil:
		return notPatched(pod, plan, "the pod has no "+StateAnnotation)
	case st.UpgradeID != plan.UpgradeID:
		return notPatched(pod, plan, "the pod's state belongs to upgrade "+st.UpgradeID)
	}
	a := Account{Reason: st.Reason, Message: st.Message, PatchedAt: st.PatchedAt, FinishedAt: st.FinishedAt}
	switch st.Phase {
	case PhaseSucceeded:
		return ended(a, pod, plan, events.UpgradeSucceeded, func(cp events.ContainerPlan) string { return cp.ToImage })
	case PhaseRolledBack:
		// Only the containers the patch changed went back.
		return ended(a, pod, changed(plan, st), events.UpgradeRolledBack, func(cp events.ContainerPlan) string { return cp.FromImage })
	case PhaseFailed:
		a.Stage, a.Type = StageEnded, events.UpgradeFailed
		return a
	case PhasePatched:
		return patched(a, pod, st, plan)
	}
	return moving(a, fmt.Sprintf("upgrade %s is %s", st.UpgradeID, st.Phase))
}

// notPatched is the account of a pod without the plan's state.
func notPatched(pod *corev1.Pod, plan events.Plan, why string) Account {
	if plan.Resize == nil && len(plan.Containers) > 0 && setTo(pod, plan, func(cp events.ContainerPlan) string { return cp.ToImage }) == "" {
		return Account{Stage: StageUpToDate, Message: why + "; every planned container is already set to its target"}
	}
	return Account{Stage: StageNotPatched, Message: why}
}

// ended is the account of a final phase whose containers must be set to
// want's images: a spec that says otherwise does not bear the state out.
func ended(a Account, pod *corev1.Pod, plan events.Plan, typ string, want func(events.ContainerPlan) string) Account {
	if bad := setTo(pod, plan, want); bad != "" {
		return moving(a, fmt.Sprintf("the state says %s, but %s", shortOutcome(typ), bad))
	}
	a.Stage, a.Type = StageEnded, typ
	return a
}

// patched is the account of a Patched state: the completion check decides
// while no end is written.
func patched(a Account, pod *corev1.Pod, st *State, plan events.Plan) Account {
	if st.Resize != nil {
		return moving(a, "the resize has not ended") // a resize's end is always written
	}
	if HasGate(pod) {
		if s, _ := GateStatus(pod); s != corev1.ConditionTrue {
			return moving(a, "the gate "+ReadinessGate+" is not open yet")
		}
	}
	r := Progress(pod, st, plan)
	if r.Verdict != Succeeded {
		return moving(a, r.Reason+": "+r.Message)
	}
	return Account{Stage: StagePassed, Type: events.UpgradeSucceeded, Reason: ReasonUpdated, Message: r.Message, PatchedAt: st.PatchedAt}
}

func moving(a Account, msg string) Account {
	return Account{Stage: StageMoving, Reason: a.Reason, Message: msg, PatchedAt: a.PatchedAt}
}

// changed is plan with only the containers the patch changed (st's).
func changed(plan events.Plan, st *State) events.Plan {
	out := plan
	out.Containers = nil
	for _, cp := range plan.Containers {
		if st.Container(cp.Name) != nil {
			out.Containers = append(out.Containers, cp)
		}
	}
	return out
}

// setTo is "" when every planned container's spec image is want's, else
// the first that is not.
func setTo(pod *corev1.Pod, plan events.Plan, want func(events.ContainerPlan) string) string {
	for _, cp := range plan.Containers {
		c, ok := findContainer(&pod.Spec, "/spec", cp.Name)
		switch {
		case !ok:
			return "container " + cp.Name + " is gone"
		case c.Image != want(cp):
			return fmt.Sprintf("container %s is set to %s, not %s", cp.Name, c.Image, want(cp))
		}
	}
	return ""
}

func shortOutcome(typ string) string {
	switch typ {
	case events.UpgradeSucceeded:
		return "Succeeded"
	case events.UpgradeRolledBack:
		return "RolledBack"
	}
	return "Failed"
}

// Reasons of a plan its owner no longer allows (the guards' refusals),
// which verify reports failed without writing the pod.
const (
	ReasonNotOptedIn    = "NotOptedIn"
	ReasonPolicyRefuses = "PolicyRefuses"
)

// Contradicts says how the account contradicts an outcome of type typ
// with reason, or "" when it bears it out. It bears out
//   - a success: the state's Succeeded, a completion check passed with no
//     end written, or every target set with no patch (patch-pod's
//     AlreadyUpToDate);
//   - a rollback: the state's RolledBack, or a pod gone (nothing is left
//     to show it);
//   - a failure: a pod gone, the state's Failed, no patch of this upgrade
//     (pre-pull's and patch-pod's refusals write nothing on the pod), or
//     the owner's withdrawal of an upgrade under way (verify reports it
//     without a write).
func (a Account) Contradicts(typ, reason string) string {
	ok := false
	switch typ {
	case events.UpgradeSucceeded:
		ok = a.Type == events.UpgradeSucceeded || a.Stage == StageUpToDate
	case events.UpgradeRolledBack:
		ok = a.Type == events.UpgradeRolledBack || a.Stage == StageGone
	case events.UpgradeFailed:
		switch a.Stage {
		case StageGone, StageNotPatched, StageUpToDate:
			ok = true
		case StageEnded:
			ok = a.Type == events.UpgradeFailed
		default:
			ok = reason == ReasonNotOptedIn || reason == ReasonPolicyRefuses
		}
	}
	if ok {
		return ""
	}
	return "the pod shows the upgrade " + a.describe() + ": " + a.Message
}

func (a Account) describe() string {
	switch a.Stage {
	case StageGone:
		return "gone"
	case StageNotPatched:
		return "not patched"
	case StageUpToDate:
		return "not patched, its containers already set to the targets"
	case StageMoving:
		return "still under way"
	case StagePassed:
		return "succeeded (no end written)"
	}
	return "ended " + shortOutcome(a.Type)
}

// Outcome is the outcome the account shows for plan (Gone, Passed, Ended).
func (a Account) Outcome(plan events.Plan) events.OutcomeData {
	o := events.OutcomeData{Plan: plan, Outcome: events.OutcomeFailed, Reason: a.Reason, Message: a.Message,
		PatchedAt: a.PatchedAt, FinishedAt: a.FinishedAt}
	switch a.Type {
	case events.UpgradeSucceeded:
		o.Outcome = events.OutcomeSucceeded
	case events.UpgradeRolledBack:
		o.Outcome = events.OutcomeRolledBack
	}
	return o
}
