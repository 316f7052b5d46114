package rollout

// maxEnded bounds the earlier upgrades' ends one pod name carries.
const maxEnded = 2

// maxCarried bounds the pod names whose ends a record carries at its top
// level (Carried).
const maxCarried = 4096

// Ended is how an earlier upgrade of a pod ended, as its rollout recorded
// it. A record is replaced by the next rollout's, and a message of the
// earlier upgrade may come after that (a verify timer parked on the
// stream, across a restart): its recorded end answers it, rather than the
// pod, which may have moved on since.
type Ended struct {
	UpgradeID string   `json:"upgradeID"`
	UID       string   `json:"uid"`
	State     PodState `json:"state"`
}

// final: the upgrade of a pod in state s is over for good (an outcome
// verify reported, or the watchdog's).
func final(s PodState) bool { return s == Succeeded || s == Failed || s == RolledBack }

// endsOf is p's own end, when it has one, before the ends it carries; at
// most maxEnded.
func endsOf(p *Pod) []Ended {
	var out []Ended
	if final(p.State) && p.UpgradeID != "" {
		out = append(out, Ended{UpgradeID: p.UpgradeID, UID: p.UID, State: p.State})
	}
	out = append(out, p.Ended...)
	return out[:min(len(out), maxEnded)]
}

// carry is what a rollout after prev carries of its pods' ends, by name:
// each pod's (live, then gone), then those prev carried still; at most
// maxCarried names.
func carry(prev *Rollout) map[string][]Ended {
	out := map[string][]Ended{}
	add := func(name string, ends []Ended) {
		if len(ends) == 0 || (len(out) >= maxCarried && out[name] == nil) {
			return
		}
		out[name] = append(out[name], ends...)[:min(len(out[name])+len(ends), maxEnded)]
	}
	for name, p := range prev.Pods {
		add(name, endsOf(p))
	}
	for _, p := range prev.Gone {
		add(p.Name, endsOf(p))
	}
	for name, ends := range prev.Carried {
		if prev.Pods[name] == nil {
			add(name, ends)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// EndOf is the state the record r holds pod name (uid) in once
// upgradeID's upgrade of it is over: its entry p's own state (nil: r has
// no entry of that name) when the entry is that upgrade's, else that
// upgrade's end the entry or the record carries from an earlier rollout;
// "" while in flight (or pending), or when the record has no end of it.
func EndOf(r *Rollout, p *Pod, name, uid, upgradeID string) PodState {
	if p != nil && p.UID == uid && p.UpgradeID == upgradeID {
		if p.State == InFlight || p.State == Pending {
			return ""
		}
		return p.State
	}
	var ends []Ended
	if p != nil {
		ends = p.Ended
	}
	for _, list := range [][]Ended{ends, r.Carried[name]} {
		for _, e := range list {
			if e.UID == uid && e.UpgradeID == upgradeID {
				return e.State
			}
		}
	}
	return ""
}
