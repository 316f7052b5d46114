package guard

import (
	"testing"

	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// TestEndedReadsThePlansPodInTheRecord: Ended is the pod's recorded state
// once that upgrade of that pod (its name, its UID) is over there, also as
// an end the next rollout's record carries, "" while in flight or for
// another pod, upgrade or workload; cached records that have it in flight
// are read again past the cache.
func TestEndedReadsThePlansPodInTheRecord(t *testing.T) {
	with := func(f func(r *rollout.Rollout)) *rollout.Rollout {
		r := record()
		f(r)
		return r
	}
	succeeded := with(func(r *rollout.Rollout) { r.Pods["web-1"].State = rollout.Succeeded })
	for _, c := range []struct {
		name string
		r    *rollout.Rollout
		want string
	}{
		{"in flight", record(), ""},
		{"succeeded", succeeded, string(rollout.Succeeded)},
		{"rolled back", with(func(r *rollout.Rollout) { r.Pods["web-1"].State = rollout.RolledBack }), string(rollout.RolledBack)},
		{"another uid", with(func(r *rollout.Rollout) { r.Pods["web-1"].State, r.Pods["web-1"].UID = rollout.Succeeded, "pod-2" }), ""},
		{"another upgrade", with(func(r *rollout.Rollout) { r.Pods["web-1"].State, r.Pods["web-1"].UpgradeID = rollout.Succeeded, "u-0" }), ""},
		{"another workload", with(func(r *rollout.Rollout) { r.Pods["web-1"].State, r.Workload.UID = rollout.Succeeded, "other" }), ""},
		{"no such pod", with(func(r *rollout.Rollout) { delete(r.Pods, "web-1") }), ""},
		{"carried by the next rollout's pod", with(func(r *rollout.Rollout) {
			r.Pods["web-1"].UpgradeID = "u-2"
			r.Pods["web-1"].Ended = []rollout.Ended{{UpgradeID: "u-1", UID: "pod-1", State: rollout.Succeeded}}
		}), string(rollout.Succeeded)},
		{"carried by the next rollout's record", with(func(r *rollout.Rollout) {
			delete(r.Pods, "web-1")
			r.Carried = map[string][]rollout.Ended{"web-1": {{UpgradeID: "u-1", UID: "pod-1", State: rollout.RolledBack}}}
		}), string(rollout.RolledBack)},
		{"carried, another uid", with(func(r *rollout.Rollout) {
			r.Pods["web-1"].UpgradeID = "u-2"
			r.Pods["web-1"].Ended = []rollout.Ended{{UpgradeID: "u-1", UID: "pod-0", State: rollout.Succeeded}}
		}), ""},
	} {
		g := &Guard{Records: encoded(t, c.r, 1)}
		if got, err := g.Ended(t.Context(), plan()); err != nil || got != c.want {
			t.Errorf("%s: Ended = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if got, err := (&Guard{Records: &revisions{}}).Ended(t.Context(), plan()); err != nil || got != "" {
		t.Errorf("no record: Ended = %q, %v; want nothing", got, err)
	}
	c := &cached{stale: encoded(t, record(), 1), now: encoded(t, succeeded, 2)}
	if got, err := (&Guard{Records: c}).Ended(t.Context(), plan()); err != nil || got != string(rollout.Succeeded) || c.fresh != 1 {
		t.Errorf("cache behind the success: Ended = %q, %v after %d fresh reads; want Succeeded after 1", got, err, c.fresh)
	}
}
