package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// SyncDone is the Sync.Step of a finished template sync.
const SyncDone = "done"

// Syncer brings a workload's template to the images its pods now run,
// without a rollout. It is called again and again until it reports done
// (a step that waits for a controller returns settle.NotYet); it must be
// safe to repeat after a crash at any point, resuming from the progress it
// returned before (r.Sync), and must never leave the workload paused,
// partitioned or switched.
type Syncer interface {
	Sync(ctx context.Context, r *rollout.Rollout) (progress rollout.Sync, done bool, err error)
}

// changeWatcher wakes a waiter at a workload's next change (kube.Cache).
type changeWatcher interface {
	Changed(ref events.ObjectRef) (<-chan struct{}, func())
}

// maxSyncWait bounds how long one delivery waits for a controller to move
// during a template sync before it hands the wait to the bus (NotYet);
// syncSteps bounds the steps one delivery takes before it hands the rest
// to its own redelivery at once (syncHandOff: no wait, a bound on one
// delivery's length: a StatefulSet's sync takes a step per pod).
const (
	maxSyncWait = 5 * time.Second
	syncSteps   = 64
	syncHandOff = 10 * time.Millisecond
)

// syncTemplate runs the template sync's steps back to back, recording each
// in the rollout state. A step that waits for a controller (a Deployment's
// status, a StatefulSet's revision) waits for the workload's next change in
// the informer cache, then the sync reads again: driven by the watch, no
// fixed delay between steps. When done the rollout is Completed.
//
// One sync at a time per workload in this process (several deliveries of
// one rollout's outcomes, or the watchdog, may reach here at once), and the
// step is re-read from the record under the lock: the Syncer writes to the
// workload before the record's compare-and-swap, so a stale step would
// pause a Deployment again after its sync was restored. A sync another
// worker completed meanwhile is returned as it is; one another replica is
// driving is waited for, woken by the record's changes (awaitSync).
func (ctl *Rollouts) syncTemplate(ctx context.Context, r *rollout.Rollout) (*rollout.Rollout, error) {
	unlock, err := ctl.lockSync(ctx, r)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := ctl.syncing(ctx, r)
	if err != nil || cur.Phase == rollout.Completed {
		return cur, err
	}
	r = cur // the step recorded, never an older one
	watcher := ctl.waiter(ctx)
	for range syncSteps {
		var woken <-chan struct{}
		stop := func() {}
		if watcher != nil {
			woken, stop = watcher.Changed(r.Workload) // before reading: no change is missed
		}
		next, err := ctl.syncStep(ctx, r)
		switch {
		case err == nil && next.Phase == rollout.Completed:
			stop()
			return next, nil
		case err == nil:
			r = next // the step is recorded: the next one at once
		case errors.Is(err, errSyncMoved):
			stop()
			return ctl.awaitSync(ctx, r)
		case woken == nil || !waitChange(ctx, woken, err):
			stop()
			return nil, err
		}
		stop()
	}
	return nil, settle.NotYet(syncHandOff, "template sync of %s: %s after %d steps; going on", r.Workload, step(r.Sync), syncSteps)
}

// lockSync holds r's workload's template sync in this process, waiting
// for another worker's turn; the watchdog's sweep does not wait (a worker
// holding it drives it) and gets a "not yet".
func (ctl *Rollouts) lockSync(ctx context.Context, r *rollout.Rollout) (func(), error) {
	key := rollout.Key(r.Workload)
	if waits(ctx) {
		return ctl.syncs.Lock(key), nil
	}
	if unlock, ok := ctl.syncs.TryLock(key); ok {
		return unlock, nil
	}
	return nil, settle.NotYet(ctl.Recheck(), "template sync of %s: another worker is driving it", r.Workload)
}

// syncing re-reads r's record: r's rollout still syncing, or completed;
// "not yet" when it moved on otherwise (superseded, halted).
func (ctl *Rollouts) syncing(ctx context.Context, r *rollout.Rollout) (*rollout.Rollout, error) {
	data, _, err := ctl.d.Store.Get(ctx, rollout.Key(r.Workload))
	if err != nil {
		return nil, fmt.Errorf("compute-spec: read rollout %s: %w", r.UpgradeID, err)
	}
	cur, err := Decode(data)
	if err != nil || cur == nil || cur.UpgradeID != r.UpgradeID ||
		(cur.Phase != rollout.Syncing && cur.Phase != rollout.Completed) {
		return nil, settle.NotYet(ctl.Recheck(), "template sync of %s: moved on meanwhile", r.Workload)
	}
	return cur, nil
}

// awaitSync waits for another worker (a replica, the watchdog) that
// recorded a step of r's sync meanwhile to complete it, woken by the
// record's changes, and returns the completed record; past the wait, the
// delivery is handed back to the bus (its safety net: recheck). The
// watchdog's sweep does not wait: the next sweep looks again.
func (ctl *Rollouts) awaitSync(ctx context.Context, r *rollout.Rollout) (*rollout.Rollout, error) {
	for {
		woken, stop := ctl.recordChanged(rollout.Key(r.Workload))
		cur, err := ctl.syncing(ctx, r)
		if err != nil || cur.Phase == rollout.Completed {
			stop()
			return cur, err
		}
		ok := waits(ctx) && notify.Wait(ctx, woken, maxRecordWait)
		stop()
		if !ok {
			return nil, settle.NotYet(ctl.Recheck(), "template sync of %s: another worker is at step %q", r.Workload, step(cur.Sync))
		}
	}
}

// waitChange waits for woken when err is a "not yet", within maxSyncWait
// and half of what is left of ctx's deadline; false when it did not come.
func waitChange(ctx context.Context, woken <-chan struct{}, err error) bool {
	if kind, _ := settle.Classify(err); kind != settle.Later {
		return false
	}
	return notify.Wait(ctx, woken, maxSyncWait)
}

// syncStep runs one step of the template sync and records its progress in
// the rollout state; when done the rollout is Completed.
func (ctl *Rollouts) syncStep(ctx context.Context, r *rollout.Rollout) (*rollout.Rollout, error) {
	progress, done := rollout.Sync{Step: SyncDone, Result: events.TemplateNone, Note: "template sync is off"}, true
	if ctl.d.Syncer != nil {
		var err error
		if progress, done, err = ctl.d.Syncer.Sync(ctx, r); err != nil {
			return nil, fmt.Errorf("compute-spec: template sync of %s: %w", r.Workload, err)
		}
	}
	var out *rollout.Rollout
	_, err := ctl.d.Store.Update(ctx, rollout.Key(r.Workload), func(old []byte) ([]byte, error) {
		cur, err := Decode(old)
		if err != nil || cur == nil || cur.UpgradeID != r.UpgradeID {
			return nil, fmt.Errorf("compute-spec: rollout %s changed during its template sync", r.UpgradeID)
		}
		if step(cur.Sync) != step(r.Sync) || cur.Phase != rollout.Syncing {
			// Another worker (a redelivery, the watchdog) recorded a step
			// meanwhile: never write an older one over it.
			return nil, errSyncMoved
		}
		cur.Sync, cur.UpdatedAt = &progress, ctl.d.Now()
		if done {
			cur.Phase = rollout.Completed
		}
		out = cur
		return json.Marshal(cur)
	})
	if err != nil {
		return nil, err
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
