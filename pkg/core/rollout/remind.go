package rollout

import "time"

// Remind records the watchdog's reminder number nudge (from 0) of the wait
// that began at since (the pod's plan, patch or rollback) of the pod name
// (uid) in flight under upgradeID: a new try, so the reminder and every
// step it leads to have ids of their own (Pod.Attempt), while a repeat of
// a recorded reminder (another replica's sweep, a retried write) changes
// nothing. It reports whether the record changed.
func Remind(r *Rollout, name, uid, upgradeID string, since time.Time, nudge int, now time.Time) bool {
	p := r.Pods[name]
	if p == nil || p.State != InFlight || p.UID != uid || p.UpgradeID != upgradeID || !Due(p, since, nudge) {
		return false
	}
	p = r.edit(name)
	p.Reminded, p.RemindedFor, p.Attempts = nudge+1, since, max(p.Attempts, 1)+1
	r.UpdatedAt = now
	return true
}

// Due reports whether the reminder nudge of the wait that began at since
// is still to be recorded for p.
func Due(p *Pod, since time.Time, nudge int) bool {
	return !p.RemindedFor.Equal(since) || p.Reminded <= nudge
}
