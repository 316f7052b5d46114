package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Wake plans what the cluster now allows of the rollout of ref: the watch
// calls it when a pod of the workload became Ready or left (a slot is
// free), or when a node finished pulling (WakeNode). It is level-triggered:
// the decision is re-derived from the record and the cache, and the record
// is written only when a pod is planned (or the phase moves). It returns
// the events to publish.
func (ctl *Rollouts) Wake(ctx context.Context, ref events.ObjectRef) ([]cloudevents.Event, error) {
	r, err := ctl.readShared(ctx, rollout.Key(ref))
	if err == nil && r != nil && r.Canaried() {
		return ctl.Analyze(ctx, ref)
	}
	if err != nil || !waiting(r) {
		return nil, err
	}
	in, err := wakeEvent(r)
	if err != nil {
		return nil, err
	}
	outs, err := ctl.replan(ctx, in, ref, func(*rollout.Rollout) {}, true)
	if k, _ := settle.Classify(err); k == settle.Later {
		return outs, nil // waits on: the next change wakes it again
	}
	return outs, err
}

// WakeNode wakes the rollouts with a pod waiting on node (its pull done).
func (ctl *Rollouts) WakeNode(ctx context.Context, node string) ([]cloudevents.Event, error) {
	keys, err := ctl.d.Store.Keys(ctx)
	if err != nil {
		return nil, wrap("wake: list rollouts", err)
	}
	sort.Strings(keys)
	var outs []cloudevents.Event
	for _, key := range keys {
		r, err := ctl.readShared(ctx, key)
		if errors.Is(err, settle.ErrPermanent) { // a record that does not decode waits on nothing
			continue
		}
		if err != nil {
			return outs, err
		}
		if !waiting(r) || !waitsOn(r, node) {
			continue
		}
		more, err := ctl.Wake(ctx, r.Workload)
		if err != nil {
			return outs, err
		}
		outs = append(outs, more...)
	}
	return outs, nil
}

// readShared is key's record as read (a watched copy, that may lag a
// write: the wake-up's replan writes by compare-and-swap), decoded once per
// revision between the process's readers (Decoded): shared, read only;
// nil when there is none. A record that does not decode is a permanent
// error.
func (ctl *Rollouts) readShared(ctx context.Context, key string) (*rollout.Rollout, error) {
	raw, rev, err := ctl.readRaw(ctx, key)
	if err != nil || raw == nil {
		return nil, err
	}
	r, err := ctl.d.Decoded.Get(key, rev, raw)
	if err != nil {
		return nil, settle.Permanent(wrap("decode rollout state", err))
	}
	return r, nil
}

// waiting: r runs and has pods to plan.
func waiting(r *rollout.Rollout) bool {
	if r == nil || r.Phase != rollout.Running {
		return false
	}
	for _, p := range r.Pods {
		if p.State == rollout.Pending {
			return true
		}
	}
	return false
}

func waitsOn(r *rollout.Rollout, node string) bool {
	for _, p := range r.Pods {
		if p.State == rollout.Pending && p.Node == node {
			return true
		}
	}
	return false
}

// wakeEvent is the input a wake-up's transitions of r are made from, in
// the push's trace (so `inplace trace` and `replay --upgrade` find the
// push of what it plans): one per rollout and wave, so a wake-up re-emits only what it planned itself
// (with the ids any other path gives those plans).
func wakeEvent(r *rollout.Rollout) (cloudevents.Event, error) {
	e, err := events.New(fmt.Sprintf("wake-%s-%d", r.UpgradeID, r.Wave), "dev.inplace.rollout.wake.v1", events.Source(Name), r.Workload.String(),
		map[string]string{"upgradeID": r.UpgradeID})
	if err == nil {
		e.SetExtension(events.ExtUpgradeID, r.UpgradeID)
		if r.TraceParent != "" {
			e.SetExtension(events.ExtTraceParent, r.TraceParent)
		}
	}
	return e, err
}
