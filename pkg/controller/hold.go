package controller

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// holder holds a StatefulSet from its rollout's first plan until the
// template sync takes the hold over (templatesync.Syncer.Hold), so
// patch-pod can label each pod with the revision the sync will make in
// the same write as its images.
type holder interface {
	Hold(ctx context.Context, r *rollout.Rollout, sts *appsv1.StatefulSet) (*appsv1.StatefulSet, error)
	Release(ctx context.Context, r *rollout.Rollout) error
}

// maxHoldWait bounds the wait, after a hold is written, for the
// controller to show it observed it before the plans go out: a pod patched
// earlier is only not labelled ahead (its sync relabels it).
const maxHoldWait = 5 * time.Second

// holdStatefulSet makes sure r's StatefulSet is held before r's plans go
// out, from the cache: nothing is written when it is held already. A hold
// refused because the StatefulSet changed after the cache read it (its
// status, another writer) is tried again once the cache has the change,
// within maxHoldWait (from the watchdog's sweep: once, and the
// controller's observation is not waited for). The hold only saves the
// sync's relabels, so any other failure is logged and the rollout goes on
// (patch-pod labels a pod only while it sees the hold).
func (ctl *Rollouts) holdStatefulSet(ctx context.Context, r *rollout.Rollout) {
	h, ok := ctl.d.Syncer.(holder)
	if !ok || r.Workload.Kind != "StatefulSet" || r.Phase != rollout.Running {
		return
	}
	var held *appsv1.StatefulSet
	err := ctl.tryOnChange(ctx, r.Workload, func() error {
		held = nil
		sts := ctl.statefulSet(r)
		if sts == nil {
			return nil
		}
		var err error
		held, err = h.Hold(ctx, r, sts)
		return err
	})
	if err != nil {
		ctl.d.Log.Warn("StatefulSet not held; its sync relabels the pods", "workload", r.Workload.String(), "upgrade", r.UpgradeID, "err", err)
		return
	}
	if held != nil {
		ctl.awaitObserved(ctx, r, held.Generation)
	}
}

// tryOnChange calls try, and again each time the cache sees ref change
// while try answers "not yet" (settle.Later), within maxHoldWait and ctx;
// once only without the cache's wake-ups or in the watchdog's sweep
// (waiter). A change before a wait is registered is in the try that
// follows it. It returns try's last error.
func (ctl *Rollouts) tryOnChange(ctx context.Context, ref events.ObjectRef, try func() error) error {
	watcher := ctl.waiter(ctx)
	deadline := time.Now().Add(maxHoldWait)
	for {
		woken, stop := changes(watcher, ref)
		err := try()
		again := false
		if kind, _ := settle.Classify(err); kind == settle.Later && watcher != nil {
			again = notify.Wait(ctx, woken, time.Until(deadline))
		}
		stop()
		if !again {
			return err
		}
	}
}

// waiter is the cache's wake-ups for a hold's or release's waits; nil
// (no wait: one try) without them or in the watchdog's sweep.
func (ctl *Rollouts) waiter(ctx context.Context) changeWatcher {
	if !waits(ctx) {
		return nil
	}
	watcher, _ := ctl.d.Cache.(changeWatcher)
	return watcher
}

// changes is watcher's wake-up for ref, registered before the read it
// guards; a nil channel and a no-op without a watcher.
func changes(watcher changeWatcher, ref events.ObjectRef) (<-chan struct{}, func()) {
	if watcher == nil {
		return nil, func() {}
	}
	return watcher.Changed(ref)
}

// awaitObserved waits, woken by the cache, until the controller shows it
// observed generation of r's StatefulSet, within maxHoldWait and ctx
// (tryOnChange).
func (ctl *Rollouts) awaitObserved(ctx context.Context, r *rollout.Rollout, generation int64) {
	_ = ctl.tryOnChange(ctx, r.Workload, func() error {
		if sts := ctl.statefulSet(r); sts != nil && sts.Status.ObservedGeneration < generation {
			return settle.NotYet(maxHoldWait, "StatefulSet %s: generation %d not observed yet", r.Workload, generation)
		}
		return nil
	})
}

// statefulSet is r's StatefulSet from the cache, nil when absent.
func (ctl *Rollouts) statefulSet(r *rollout.Rollout) *appsv1.StatefulSet {
	w, found, err := ctl.d.Cache.Get(r.Workload)
	if err != nil || !found {
		return nil
	}
	sts, _ := w.Object.(*appsv1.StatefulSet)
	if sts == nil || string(sts.UID) != r.Workload.UID && r.Workload.UID != "" {
		return nil
	}
	return sts
}

// releaseHalted releases the hold of a halted rollout's StatefulSet once
// none of its pods is in flight, so no patch-pod write labelled ahead can
// still land: nothing is planned while it is halted, and a resume, an undo
// or a newer push holds it again from its first plan. A release waiting
// for the controller to count the pods labelled back is tried again as the
// cache sees the StatefulSet change, within maxHoldWait (once from the
// watchdog's sweep: the next sweep tries again). An error is
// returned so the input is retried: a StatefulSet held for nothing blocks
// the controller's own rollouts.
func (ctl *Rollouts) releaseHalted(ctx context.Context, r *rollout.Rollout) error {
	h, ok := ctl.d.Syncer.(holder)
	if !ok || r.Workload.Kind != "StatefulSet" || r.Phase != rollout.Halted {
		return nil
	}
	for _, p := range r.Pods {
		if p.State == rollout.InFlight {
			return nil // its outcome comes back here
		}
	}
	err := ctl.tryOnChange(ctx, r.Workload, func() error {
		if sts := ctl.statefulSet(r); sts == nil || !heldFor(sts, r.UpgradeID) {
			return nil
		}
		return h.Release(ctx, r)
	})
	return wrap("release the hold of "+r.Workload.String(), err)
}

// heldFor: sts carries upgradeID's hold record.
func heldFor(sts *appsv1.StatefulSet, upgradeID string) bool {
	rec, err := inplace.ParseSyncRecord(sts.ObjectMeta)
	return err == nil && rec != nil && rec.Hold && rec.UpgradeID == upgradeID
}
