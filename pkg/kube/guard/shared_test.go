package guard

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// TestSharedReadsFollowTheNewestRevision: checks that share their reads
// of the record (rollout.Decoded, each pod decoded once per entry) judge
// each delivery by the revision it read, never by one read before: the
// pod's outcome recorded at a newer revision refuses the next check, its
// plan under a newer upgrade refuses the old one's.
func TestSharedReadsFollowTheNewestRevision(t *testing.T) {
	ended := bigRecord(50)
	ended.Pods["web-1"].State = rollout.Succeeded
	replanned := bigRecord(50)
	replanned.UpgradeID, replanned.Pods["web-1"].UpgradeID = "u-2", "u-2"
	steps := []struct {
		name  string
		r     *rollout.Rollout
		ended string // the refusal's Ended; "" with refused: NotInFlight otherwise
		ok    bool
	}{
		{name: "in flight", r: bigRecord(50), ok: true},
		{name: "its success recorded", r: ended, ended: string(rollout.Succeeded)},
		{name: "in flight again", r: bigRecord(50), ok: true},
		{name: "planned under a newer upgrade", r: replanned},
	}
	recs := &revisions{}
	d := &rollout.Decoded{}
	g := &Guard{Owners: owners{workload("semver:minor")}, Records: recs, Decoded: d}
	st := &inplace.State{UpgradeID: "u-1", Containers: []inplace.ContainerState{{Name: "app", TargetImage: to}}}
	for i, s := range steps {
		raw, err := json.Marshal(s.r)
		if err != nil {
			t.Fatal(err)
		}
		recs.raw, recs.rev = raw, uint64(i+1)
		for _, check := range []func() error{
			func() error { return g.Plan(t.Context(), pod(), plan()) },
			func() error { _, err := g.State(t.Context(), pod(), st); return err },
		} {
			err := check()
			var r *Refusal
			switch {
			case s.ok && err != nil:
				t.Errorf("%s (revision %d): refused: %v", s.name, recs.rev, err)
			case !s.ok && (!errors.As(err, &r) || !r.NotInFlight || r.Ended != s.ended):
				t.Errorf("%s (revision %d): %v; want refused, not in flight, ended %q", s.name, recs.rev, err, s.ended)
			}
		}
	}
	v1, _ := d.View("Deployment/shop/web", 1, nil)
	v4, _ := d.View("Deployment/shop/web", 4, nil)
	p1, _ := v1.Pod("web-1")
	p4, _ := v4.Pod("web-1")
	if p1 == p4 || p4.UpgradeID != "u-2" {
		t.Errorf("revision 4 shares web-1's entry of revision 1 (%s), changed since", p4.UpgradeID)
	}
}
