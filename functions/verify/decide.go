package verify

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// action is what verify does next.
type action int

const (
	// wait: nothing decided yet.
	wait action = iota
	// succeed: set the gate, finish Succeeded, report upgrade.succeeded.
	succeed
	// rollback: patch the previous images back.
	rollback
	// rolledBack: set the gate, finish RolledBack, report upgrade.rolledback.
	rolledBack
	// fail: set the gate, finish Failed, report upgrade.failed.
	fail
	// report: report upgrade.failed without writing (the pod is not ours
	// to write any more: gone, replaced, superseded).
	report
	// openGate: set the gate True and wait on (gateEarly).
	openGate
)

// Reasons verify adds to the kubelet's and inplace's.
const (
	ReasonDeadline        = "Deadline"
	ReasonRollbackFailed  = "RollbackFailed"
	ReasonRollbackTimeout = "RollbackTimeout"
)

// decision is an action with the reason and message to record.
type decision struct {
	act             action
	reason, message string
}

// limits are the time bounds of one upgrade.
type limits struct {
	// verify bounds the upgrade from patchedAt, and the rollback from rollbackAt.
	verify time.Duration
	// pullErrors is how long a plain ErrImagePull is given to clear (or
	// turn into ImagePullBackOff) before it counts as a failure.
	pullErrors time.Duration
	// minReady is how long every container must have been running before
	// success is called (a container that crashes right after it became
	// ready would otherwise pass).
	minReady time.Duration
	// rollbackMin is the least time a rollback is given, whatever verify
	// is: the kubelet acts on the rollback only once its pod worker is
	// done with the upgrade's own pull and start, which a short verify
	// deadline may have cut short.
	rollbackMin time.Duration
}

// rollback bounds the rollback from rollbackAt.
func (l limits) rollback() time.Duration { return max(l.verify, l.rollbackMin) }

// noRollback are failures where there is nothing of ours to roll back.
var noRollback = map[string]bool{
	inplace.ReasonPodDeleted: true, inplace.ReasonPodReplaced: true, inplace.ReasonSuperseded: true,
}

// transient are pull errors the kubelet may still get past by itself.
var transient = map[string]bool{"ErrImagePull": true, "RegistryUnavailable": true}

// decide picks the next step from the state and the completion check.
func decide(pod *corev1.Pod, st *inplace.State, r inplace.Result, now time.Time, l limits) decision {
	if st.Phase == inplace.PhaseRollingBack {
		return decideRollback(pod, st, r, now, l)
	}
	switch r.Verdict {
	case inplace.Succeeded:
		if !stable(pod, st, now, l.minReady) {
			return decision{act: wait}
		}
		return decision{act: succeed, reason: inplace.ReasonUpdated, message: r.Message}
	case inplace.Failed:
		switch {
		case noRollback[r.Reason]:
			return decision{report, r.Reason, r.Message}
		case r.Reason == inplace.ReasonChangedByOthers:
			return decision{fail, r.Reason, r.Message}
		case transient[r.Reason] && now.Before(st.PatchedAt.Add(min(l.pullErrors, l.verify))):
			return decision{act: wait}
		}
		return decision{rollback, r.Reason, r.Message}
	}
	if !now.Before(st.PatchedAt.Add(l.verify)) {
		return decision{rollback, ReasonDeadline, fmt.Sprintf("not done within %s: %s", l.verify, r.Message)}
	}
	return decision{act: wait}
}

// gateEarly opens the gate patch-pod set False for this upgrade as soon as
// the kubelet has taken the patch up (inplace.Taken), while verify still
// waits for the new containers: from then on the kubelet's Ready follows
// them alone (their readiness probes), as a new pod's would, and it folds
// the open gate into the sync that sees them start, so the pod is Ready at
// their probes' success. Opened only after that success, the gate would
// cost the pod another sync, up to two PLEG relists later. A rollback's
// gate stays False until it ends.
func gateEarly(pod *corev1.Pod, st *inplace.State, plan events.Plan, d decision) decision {
	if d.act != wait || st.Phase != inplace.PhasePatched || st.Resize != nil ||
		!inplace.GateHeldFor(pod, st.UpgradeID) || !inplace.Taken(pod, st, plan) {
		return d
	}
	return decision{act: openGate, reason: inplace.GateReasonDone,
		message: fmt.Sprintf("in-place upgrade %s: the kubelet took the patch up; Ready follows the new containers", st.UpgradeID)}
}

// decideRollback is decide while the previous images are going back.
func decideRollback(pod *corev1.Pod, st *inplace.State, r inplace.Result, now time.Time, l limits) decision {
	cause := st.Reason
	if st.Message != "" {
		cause += ": " + st.Message
	}
	switch r.Verdict {
	case inplace.Succeeded:
		if !stable(pod, st, now, l.minReady) {
			return decision{act: wait}
		}
		return decision{rolledBack, st.Reason, st.Message}
	case inplace.Failed:
		switch {
		case noRollback[r.Reason]:
			return decision{report, r.Reason, fmt.Sprintf("%s; then, rolling back: %s", cause, r.Message)}
		case r.Reason == inplace.ReasonChangedByOthers:
			return decision{fail, r.Reason, fmt.Sprintf("%s; then, rolling back: %s", cause, r.Message)}
		case transient[r.Reason] && now.Before(st.RollbackAt.Add(min(l.pullErrors, l.rollback()))):
			return decision{act: wait}
		}
		return decision{fail, ReasonRollbackFailed, fmt.Sprintf("%s; the rollback failed too: %s", cause, r.Message)}
	}
	if !now.Before(st.RollbackAt.Add(l.rollback())) {
		return decision{fail, ReasonRollbackTimeout, fmt.Sprintf("%s; the rollback was not done within %s: %s", cause, l.rollback(), r.Message)}
	}
	return decision{act: wait}
}

// stable: every container of the state has been running for minReady.
// startedAt has second precision, so a second is added.
func stable(pod *corev1.Pod, st *inplace.State, now time.Time, minReady time.Duration) bool {
	if minReady <= 0 {
		return true
	}
	for _, c := range st.Containers {
		cs := inplace.ContainerStatus(pod, c.Name)
		if cs == nil || cs.State.Running == nil || now.Before(cs.State.Running.StartedAt.Add(minReady+time.Second)) {
			return false
		}
	}
	return true
}

// untilStable is how long until every running container of the state has
// been running for minReady (stable's bound); zero when that is not ahead.
func untilStable(pod *corev1.Pod, st *inplace.State, now time.Time, minReady time.Duration) time.Duration {
	var until time.Duration
	if minReady <= 0 {
		return 0
	}
	for _, c := range st.Containers {
		if cs := inplace.ContainerStatus(pod, c.Name); cs != nil && cs.State.Running != nil {
			until = max(until, cs.State.Running.StartedAt.Add(minReady+time.Second).Sub(now))
		}
	}
	return until
}
