package rollout

import (
	"fmt"
	"testing"

	"github.com/inplace-dev/inplace/events"
)

// TestTheNextRolloutsCarryThePodsEnds: the ends a rollout recorded stay
// readable (EndOf) in the records of the rollouts after it, whether the
// next one plans the pod (its entry takes the end over), leaves it
// alone or does not see it (the record carries it), for maxEnded
// upgrades of a pod; an upgrade still in flight keeps its own entry.
func TestTheNextRolloutsCarryThePodsEnds(t *testing.T) {
	w := newWorld(4, 2)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 4}, t0)
	Plan(r, w.cands(), "in-1", false, t0)
	for name, state := range map[string]PodState{"web-00": Succeeded, "web-01": RolledBack, "web-02": Failed} {
		o := outcome(r, name)
		typ := events.UpgradeSucceeded
		switch state {
		case RolledBack:
			o.Outcome, typ = events.OutcomeRolledBack, events.UpgradeRolledBack
		case Failed:
			o.Outcome, typ = events.OutcomeFailed, events.UpgradeFailed
		}
		Record(r, typ, o, "out-"+name, t0)
	}
	delete(w, "web-01") // gone before the next rollout looks
	w["web-02"].Containers = nil

	end := func(r *Rollout, name, upgradeID string) PodState {
		return EndOf(r, r.Pods[name], name, "uid-"+name, upgradeID)
	}
	want := map[string]PodState{"web-00": Succeeded, "web-01": RolledBack, "web-02": Failed, "web-03": ""}
	check := func(r *Rollout, when string) {
		t.Helper()
		for name, state := range want {
			if got := end(r, name, "u-1"); got != state {
				t.Errorf("%s: u-1's end of %s = %q; want %q", when, name, got, state)
			}
		}
	}
	check(r, "u-1")

	r2 := Begin(r.Clone(), "u-2", wl, push, Options{Budget: 4}, t0)
	Plan(r2, w.cands(), "in-2", false, t0)
	check(r2, "u-2 planned")
	if p := r2.Pods["web-03"]; p.State != InFlight || p.UpgradeID != "u-1" {
		t.Errorf("web-03 in u-2's record: %s under %s; want in flight under u-1", p.State, p.UpgradeID)
	}
	if p := r2.Pods["web-00"]; p.State != InFlight || p.UpgradeID != "u-2" || len(p.Ended) != 1 {
		t.Errorf("web-00 in u-2's record: %s under %s carrying %v; want in flight under u-2, carrying u-1's end", p.State, p.UpgradeID, p.Ended)
	}
	if got := r2.Carried; len(got) != 1 || got["web-01"] == nil {
		t.Errorf("u-2's record carries %v at its top; want web-01's end only (no pod of its own)", got)
	}
	Record(r2, events.UpgradeSucceeded, outcome(r2, "web-00"), "out-2", t0)

	r3 := Begin(r2.Clone(), "u-3", wl, push, Options{Budget: 4}, t0)
	Plan(r3, w.cands(), "in-3", false, t0)
	check(r3, "u-3 planned")
	if got := end(r3, "web-00", "u-2"); got != Succeeded {
		t.Errorf("u-3: u-2's end of web-00 = %q; want Succeeded", got)
	}
	Record(r3, events.UpgradeSucceeded, outcome(r3, "web-00"), "out-3", t0)

	r4 := Begin(r3.Clone(), "u-4", wl, push, Options{Budget: 4}, t0)
	Plan(r4, w.cands(), "in-4", false, t0)
	if got, n := end(r4, "web-00", "u-1"), len(r4.Pods["web-00"].Ended); got != "" || n != maxEnded {
		t.Errorf("u-4: web-00 carries %d ends, u-1's %q; want the last %d only", n, got, maxEnded)
	}
}

// TestCarriedIsBounded: a record carries the ends of at most maxCarried
// pod names.
func TestCarriedIsBounded(t *testing.T) {
	r := &Rollout{UpgradeID: "u-1", Workload: wl, Phase: Completed, Pods: map[string]*Pod{}}
	for i := range maxCarried + 10 {
		name := fmt.Sprintf("web-%05d", i)
		r.Pods[name] = &Pod{Name: name, UID: "uid-" + name, State: Succeeded, UpgradeID: "u-1"}
	}
	if got := len(Begin(r, "u-2", wl, push, Options{Budget: 1}, t0).Carried); got != maxCarried {
		t.Errorf("the next record carries the ends of %d pods; want %d", got, maxCarried)
	}
}
