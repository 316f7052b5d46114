package rollout

import (
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Begin starts the rollout of push on a workload. When prev is the same
// upgrade (a redelivered push) it is returned as is. When prev is an
// unfinished rollout of an older push, the new one supersedes it: pods in
// flight stay in flight under their old upgrade (their outcome frees them
// for the new target), every other pod is planned afresh for the new target.
// The ends prev recorded are carried (Carried, then each pod's Ended).
// The caller has checked that push is newer than prev's target, and that
// prev is not in the middle of a template sync.
func Begin(prev *Rollout, upgradeID string, w events.ObjectRef, push events.UpgradeRequestData, opts Options, now time.Time) *Rollout {
	if prev != nil && prev.UpgradeID == upgradeID {
		return prev
	}
	r := &Rollout{
		UpgradeID: upgradeID, Workload: w, Push: push, Phase: Running, Options: opts,
		Pods: map[string]*Pod{}, StartedAt: now, UpdatedAt: now, ProgressAt: now, History: map[string]History{},
	}
	if prev != nil {
		for repo, h := range prev.History {
			r.History[repo] = h
		}
		r.LastMoved = lastMoved(prev)
		r.Carried = carry(prev)
	}
	if prev == nil || prev.Phase.Finished() {
		return r
	}
	r.Superseded = prev.UpgradeID
	r.Wave = prev.Wave
	for name, p := range prev.Pods {
		if p.State == InFlight {
			cp := *p
			r.Pods[name] = &cp
			delete(r.Carried, name) // the entry carries its own
		}
	}
	return r
}

// Resume restarts a halted rollout: pods that failed or were rolled back are
// planned again.
func Resume(r *Rollout, now time.Time) bool {
	if r.Phase != Halted {
		return false
	}
	r.Phase, r.Reason, r.Message, r.HaltedBy = Running, "", "", ""
	for name, p := range r.Pods {
		if p.State == Failed || p.State == RolledBack {
			p = r.edit(name)
			p.State, p.Reason = Pending, ""
		}
	}
	r.UpdatedAt, r.ProgressAt = now, now
	return true
}
