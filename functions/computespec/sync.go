package computespec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/rollout"
	"github.com/inplace-dev/inplace/pkg/settle"
)

// SyncDone is the Sync.Step of a finished template sync.
const SyncDone = "done"

// Syncer brings a workload's template to the images its pods now run,
// without a rollout. It is called again and again (between calls the
// handler returns settle.NotYet) until it reports done; it must be safe to
// repeat after a crash at any point, resuming from the progress it returned
// before (r.Sync), and must never leave the workload paused, partitioned or
// switched.
type Syncer interface {
	Sync(ctx context.Context, r *rollout.Rollout) (progress rollout.Sync, done bool, err error)
}

// syncTemplate runs one step of the template sync and records its progress
// in the rollout state; when done the rollout is Completed.
func (f *Function) syncTemplate(ctx context.Context, r *rollout.Rollout) (*rollout.Rollout, error) {
	progress, done := rollout.Sync{Step: SyncDone, Result: events.TemplateNone, Note: "template sync is off"}, true
	if f.d.Syncer != nil {
		var err error
		if progress, done, err = f.d.Syncer.Sync(ctx, r); err != nil {
			return nil, fmt.Errorf("compute-spec: template sync of %s: %w", r.Workload, err)
		}
	}
	var out *rollout.Rollout
	_, err := f.d.Store.Update(ctx, rollout.Key(r.Workload), func(old []byte) ([]byte, error) {
		cur, err := decode(old)
		if err != nil || cur == nil || cur.UpgradeID != r.UpgradeID {
			return nil, fmt.Errorf("compute-spec: rollout %s changed during its template sync", r.UpgradeID)
		}
		if step(cur.Sync) != step(r.Sync) || cur.Phase != rollout.Syncing {
			// Another worker (a redelivery, the watchdog) recorded a step
			// meanwhile: never write an older one over it.
			return nil, errSyncMoved
		}
		cur.Sync, cur.UpdatedAt = &progress, f.d.Now()
		if done {
			cur.Phase = rollout.Completed
		}
		out = cur
		return json.Marshal(cur)
	})
	if errors.Is(err, errSyncMoved) {
		return nil, settle.NotYet(stallRecheck, "template sync of %s: moved on meanwhile", r.Workload)
	}
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, settle.NotYet(stallRecheck, "template sync of %s: %s", r.Workload, progress.Step)
	}
	return out, nil
}

var errSyncMoved = errors.New("template sync moved on")

// step names the progress of a sync ("" before the first step).
func step(s *rollout.Sync) string {
	if s == nil {
		return ""
	}
	return s.Step
}
