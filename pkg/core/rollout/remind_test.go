package rollout

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Each reminder of a wait is recorded once, as a new try; a repeat (another
// replica's sweep, an older nudge) changes nothing; a new wait (the pod got
// patched) starts counting its reminders again; a pod no longer in flight
// under that upgrade is not reminded.
func TestRemind(t *testing.T) {
	planned, patched := t0, t0.Add(time.Minute)
	type step struct {
		Since   time.Time
		Nudge   int
		Changed bool
		Attempt int
	}
	tests := []struct {
		name  string
		edit  func(*Pod)
		steps []step
	}{
		{"reminders of one wait", nil, []step{
			{planned, 0, true, 1}, {planned, 0, false, 1}, {planned, 1, true, 2}, {planned, 0, false, 2}, {planned, 3, true, 3}}},
		{"a new wait", nil, []step{
			{planned, 0, true, 1}, {planned, 1, true, 2}, {patched, 0, true, 3}, {patched, 0, false, 3}}},
		{"a record from before attempts were counted", func(p *Pod) { p.Attempts = 0 }, []step{{planned, 0, true, 1}}},
		{"no longer in flight", func(p *Pod) { p.State = Succeeded }, []step{{planned, 0, false, 0}}},
		{"another upgrade", func(p *Pod) { p.UpgradeID = "u-0" }, []step{{planned, 0, false, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(1, 1)
			r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
			p := Plan(r, w.cands(), "push", false, planned)[0]
			if tt.edit != nil {
				tt.edit(p)
			}
			var got, want []step
			for _, s := range tt.steps {
				changed := Remind(r, p.Name, p.UID, "u-1", s.Since, s.Nudge, t0)
				got = append(got, step{s.Since, s.Nudge, changed, r.Pods[p.Name].Attempt()})
				want = append(want, s)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reminders (-want +got):\n%s", diff)
			}
		})
	}
}
