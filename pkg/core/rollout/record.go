package rollout

import (
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Record applies the outcome of one pod's upgrade. Outcomes that do not
// match a pod in flight under that upgrade (duplicates, late arrivals) change
// nothing. A failure or rollback of the current upgrade halts the rollout;
// the outcome of a superseded upgrade only frees its pod for the new target.
// inputID is the outcome event's id.
func Record(r *Rollout, typ string, o events.OutcomeData, inputID string, now time.Time) {
	p := Recordable(r, typ, o)
	if p == nil {
		return
	}
	p = r.edit(o.Plan.Pod.Name)
	r.UpdatedAt, r.ProgressAt = now, now
	if p.UpgradeID != r.UpgradeID {
		p.State, p.Reason, p.PlannedBy = Pending, "superseded by "+r.UpgradeID, ""
		return
	}
	p.Reason = o.Reason
	if typ == events.UpgradeFailed && goneReasons[o.Reason] {
		p.State = Deleted
		if o.Message != "" {
			p.Reason += ": " + o.Message
		}
		r.leave(p)
		return
	}
	switch typ {
	case events.UpgradeSucceeded:
		p.State, p.PatchedAt = Succeeded, o.PatchedAt
		return
	case events.UpgradeRolledBack:
		p.State = RolledBack
	default:
		p.State = Failed
	}
	if r.Restart != nil && r.Restart.Strategy.Ignore() {
		return // failurePolicy Ignore: the request goes on with the other pods
	}
	if r.Phase == Running {
		r.Phase, r.HaltedBy = Halted, inputID
		r.Reason = "Upgrade" + string(p.State)
		if o.Reason != "" {
			r.Reason = o.Reason
		}
		r.Message = o.Plan.Pod.String() + ": " + o.Message
	}
}

// Recordable is the pod an outcome would change in r (Record), or nil when
// it would change nothing: no pod of that UID in flight under that upgrade
// (a duplicate, a late arrival), unless the outcome undoes its success.
func Recordable(r *Rollout, typ string, o events.OutcomeData) *Pod {
	p := r.Pods[o.Plan.Pod.Name]
	if p == nil || p.UID != o.Plan.Pod.UID || p.UpgradeID != o.Plan.UpgradeID || (p.State != InFlight && !undone(p, typ, o)) {
		return nil
	}
	return p
}

// undone: p's success was recorded, and o says the same attempt (the same
// patch, by its time) ended otherwise after all. A pod without a gate
// writes nothing when verify judges it a success, so verify may still roll
// it back (it crashed) before this record shows the success to its guard;
// the record then tells what became of the pod, not what was said first.
// An outcome of an earlier attempt (a rollout resumed re-plans a pod) has
// another patch time and changes nothing, and so do a supersession and a
// pod deleted or replaced: they say another upgrade took the pod, or the
// pod left the workload (reconcile moves it to Gone, still Succeeded), not
// that this upgrade ended otherwise.
func undone(p *Pod, typ string, o events.OutcomeData) bool {
	return p.State == Succeeded && typ != events.UpgradeSucceeded &&
		o.Reason != reasonSuperseded && !goneReasons[o.Reason] &&
		!p.PatchedAt.IsZero() && p.PatchedAt.Equal(o.PatchedAt)
}

// reasonSuperseded is inplace.ReasonSuperseded: a verify timer of an
// upgrade whose pod another upgrade took.
const reasonSuperseded = "Superseded"

// goneReasons are the outcomes of a pod that left the workload in flight
// (inplace.ReasonPodDeleted, ReasonPodReplaced): not the upgrade's failure.
var goneReasons = map[string]bool{"PodDeleted": true, "PodReplaced": true}

// leave moves a pod the rollout touched from Pods to Gone, so a replacement
// of the same name is planned like any other pod and the pod still counts.
func (r *Rollout) leave(p *Pod) {
	if r.Pods[p.Name] == p {
		delete(r.Pods, p.Name)
	}
	for _, g := range r.Gone {
		if g.UID == p.UID {
			return
		}
	}
	r.Gone = append(r.Gone, p)
}

// Settle moves a Running rollout whose pods all run the target (none
// pending or in flight) to Syncing and reports whether every pod needed
// nothing at all (then there is nothing to roll out). inputID is recorded so
// a redelivery re-emits the same completion.
func Settle(r *Rollout, inputID string, now time.Time) (settledNow bool) {
	if r.Phase != Running || r.Request() != nil || !r.Analysis.Done() {
		return false
	}
	for _, p := range r.Pods {
		if p.State == Pending || p.State == InFlight {
			return false
		}
	}
	r.Phase, r.SettledBy, r.UpdatedAt = Syncing, inputID, now
	return true
}

// Idle reports whether the rollout changed no pod at all: every pod was
// already current.
func (r *Rollout) Idle() bool {
	for _, p := range r.Pods {
		if p.State != Current {
			return false
		}
	}
	return true
}

// Halt stops a Running rollout for reason (the watchdog's deadlines):
// nothing new is planned; pods in flight still report their outcomes.
func Halt(r *Rollout, reason, message, inputID string, now time.Time) {
	if r.Phase != Running {
		return
	}
	r.Phase, r.HaltedBy, r.Reason, r.Message, r.UpdatedAt = Halted, inputID, reason, message, now
}
