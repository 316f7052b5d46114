package fleetworld_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/test/registry"
)

var members = []string{"staging", "prod-eu", "prod-us"}

// TestOnePushMovesTheFleetInOrder: one push begun at the hub upgrades
// staging in place, then both production clusters; their rollouts start
// only after staging's completed, and every pod keeps its UID.
func TestOnePushMovesTheFleetInOrder(t *testing.T) {
	cf := startChainFleet(t)
	before := map[string]map[string]pod{}
	for _, m := range members {
		before[m] = cf.pods(m)
	}
	t0 := time.Now()
	digest := cf.push("push-1", "1.1.0")
	r := cf.record("push-1", "the fleet done", 4*time.Minute, func(r *fleet.Record) bool { return fleet.Decide(r).Done })
	t.Logf("the fleet moved in %s", time.Since(t0).Round(time.Millisecond))
	for _, m := range members {
		movedInPlace(t, m, before[m], cf.pods(m), digest)
	}
	staged := cf.waitEvent("staging", events.RolloutCompleted, time.Minute).Time()
	for _, m := range []string{"prod-eu", "prod-us"} {
		first := cf.waitEvent(m, events.UpgradePlanned, time.Minute).Time()
		if !first.After(staged) {
			t.Errorf("%s planned its first pod at %s, before staging completed at %s", m, first, staged)
		}
	}
	if !r.Released["prod"].After(r.Released["staging"]) {
		t.Errorf("released staging %s, prod %s; want prod after", r.Released["staging"], r.Released["prod"])
	}
}

// TestAFailureInStagingHaltsTheFleet: a push whose image crashes fails
// verify in staging; staging rolls back, the fleet halts there, and the
// production clusters are never sent the push: their pods are unchanged.
func TestAFailureInStagingHaltsTheFleet(t *testing.T) {
	cf := startChainFleet(t)
	before := map[string]map[string]pod{}
	for _, m := range members {
		before[m] = cf.pods(m)
	}
	cf.push("push-bad", "1.1.0", registry.WithCrash())
	r := cf.record("push-bad", "the fleet halted", 4*time.Minute, func(r *fleet.Record) bool { return r.Halt != nil })
	if r.Halt.Stage != "staging" || r.Halt.Cluster != "staging" {
		t.Errorf("halt %+v; want in staging", r.Halt)
	}
	if _, ok := r.Sent["prod-eu"]; ok || len(r.Sent) != 1 {
		t.Errorf("sent to %v; want staging alone", r.Sent)
	}
	halted := cf.waitEvent("staging", events.RolloutHalted, time.Minute)
	t.Logf("staging halted: %s", halted.Data())
	for _, m := range []string{"prod-eu", "prod-us"} {
		if diff := cmp.Diff(before[m], cf.pods(m)); diff != "" {
			t.Errorf("%s's pods changed (-before +after):\n%s", m, diff)
		}
		if got := cf.events(m, events.ImagePushed); len(got) != 0 {
			t.Errorf("%s's bus holds %d pushes; want none", m, len(got))
		}
	}
}

// TestACutMemberFinishesAndReportsWhenItReturns: prod-us is cut off from
// the hub while its rollout runs; it finishes the rollout on its own, the
// hub does not know until the link heals, then takes its report and the
// fleet completes.
func TestACutMemberFinishesAndReportsWhenItReturns(t *testing.T) {
	cf := startChainFleet(t)
	ctx := t.Context()
	before := cf.pods("prod-us")
	digest := cf.push("push-1", "1.1.0")
	cf.waitEvent("prod-us", events.UpgradePlanned, 3*time.Minute)
	if err := cf.f.Cut(ctx, "prod-us"); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	done := cf.waitEvent("prod-us", events.RolloutCompleted, 2*time.Minute)
	if !done.Time().After(cut) {
		t.Fatalf("prod-us completed at %s, before the cut at %s: the test did not cut a running rollout", done.Time(), cut)
	}
	movedInPlace(t, "prod-us", before, cf.pods("prod-us"), digest)
	r := cf.record("push-1", "prod-eu's report", 2*time.Minute, func(r *fleet.Record) bool { return len(r.Members["prod-eu"].Rollouts) > 0 })
	if len(r.Members["prod-us"].Rollouts) != 0 || fleet.Decide(r).Done {
		t.Errorf("the hub has prod-us's report while it is cut off: %+v", r.Members["prod-us"])
	}
	if err := cf.f.Heal(ctx, "prod-us"); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	cf.record("push-1", "the fleet done", time.Minute, func(r *fleet.Record) bool { return fleet.Decide(r).Done })
	t.Logf("the hub took prod-us's report %s after the link healed", time.Since(healed).Round(time.Millisecond))
}
