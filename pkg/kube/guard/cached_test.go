package guard

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// cached is a read cache of the records that lags: Get serves what it
// last saw, Fresh the record as it is now, and counts its reads.
type cached struct {
	stale, now *revisions
	fresh      int
}

func (c *cached) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	return c.stale.Get(ctx, key)
}

func (c *cached) Fresh(ctx context.Context, key string) ([]byte, uint64, error) {
	c.fresh++
	return c.now.Get(ctx, key)
}

func encoded(t *testing.T, r *rollout.Rollout, rev uint64) *revisions {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return &revisions{raw: raw, rev: rev}
}

// TestCachedRecordsNeverRefuseAlone: a check on cached records reads the
// record past the cache only when the cache refuses it; a refusal the
// record as it is now does not bear out (the cache had not seen the pod
// planned) is no refusal, one it bears out stays.
func TestCachedRecordsNeverRefuseAlone(t *testing.T) {
	before := record()
	delete(before.Pods, "web-1") // the cache lags the pod's plan
	ended := record()
	ended.Pods["web-1"].State = rollout.Succeeded
	tests := []struct {
		name       string
		stale, now *rollout.Rollout
		refused    bool
		freshReads int
	}{
		{name: "the cache confirms: no read past it", stale: record(), now: record()},
		{name: "the cache lags the plan: the record confirms", stale: before, now: record(), freshReads: 1},
		{name: "the record refuses too", stale: before, now: ended, refused: true, freshReads: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := &cached{stale: encoded(t, tt.stale, 1), now: encoded(t, tt.now, 2)}
			g := &Guard{Owners: owners{workload("semver:minor")}, Records: recs}
			err := g.Plan(t.Context(), pod(), plan())
			if (err != nil) != tt.refused {
				t.Errorf("Plan: %v; want refused %v", err, tt.refused)
			}
			if recs.fresh != tt.freshReads {
				t.Errorf("%d reads past the cache; want %d", recs.fresh, tt.freshReads)
			}
		})
	}
}
