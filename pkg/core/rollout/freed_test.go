package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An in-flight pod the cluster shows Ready with its upgrade done frees its
// max-unavailable slot before its outcome is recorded, unless the workload
// waits a min-ready time; the pod stays in flight until its outcome comes.
func TestInFlightPodShownDoneFreesItsSlot(t *testing.T) {
	tests := []struct {
		name     string
		minReady int
		change   func(*Candidate)
		want     []string
	}{
		{"Ready, done", 0, func(c *Candidate) { c.Ready, c.Done = true, "u-1" }, []string{"web-01"}},
		{"Ready, not done yet", 0, func(c *Candidate) { c.Ready = true }, nil},
		{"done, not Ready", 0, func(c *Candidate) { c.Ready, c.Done = false, "u-1" }, nil},
		{"Ready, another upgrade done", 0, func(c *Candidate) { c.Ready, c.Done = true, "u-0" }, nil},
		{"Ready, done, a replacement of the same name", 0, func(c *Candidate) { c.Ready, c.Done, c.Pod.UID = true, "u-1", "uid-other" }, nil},
		{"Ready, done, min-ready-seconds", 5, func(c *Candidate) { c.Ready, c.Done = true, "u-1" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(3, 1)
			r := Begin(nil, "u-1", wl, push, Options{Budget: 1, MinReadySeconds: tt.minReady}, t0)
			if diff := cmp.Diff([]string{"web-00"}, names(Plan(r, w.cands(), "push", false, t0))); diff != "" {
				t.Fatalf("first wave (-want +got):\n%s", diff)
			}
			w["web-00"].Containers = nil
			tt.change(w["web-00"])
			got := names(Plan(r, w.cands(), "wake", false, t0))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("planned (-want +got):\n%s", diff)
			}
			if s := r.Pods["web-00"].State; s != InFlight {
				t.Errorf("web-00 is %s; want InFlight until its outcome", s)
			}
		})
	}
}
