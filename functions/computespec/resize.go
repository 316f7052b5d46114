package computespec

import (
	"context"
	"strings"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// EventResizeRequested is the reason of the Event on a workload whose
// resize request was taken on.
const EventResizeRequested = "InPlaceResizeRequested"

// onResize starts a resize request: the workload (or bare pod) must opt
// in; its pods are planned in waves within its budget, like a push, each
// named container from the resources it asks now to the request's.
func (f *Function) onResize(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	req, err := events.As[events.ResizeRequestData](in)
	if err != nil {
		return nil, err
	}
	if err := controller.ReplayStarts(in); err != nil {
		return nil, err
	}
	ch, err := resize.Parse(req.CPU, req.Memory)
	if err != nil {
		return nil, settle.Permanentf("compute-spec: resize of %s: %v", req.Target, err)
	}
	w, ok, err := f.d.Cache.Get(req.Target)
	switch {
	case err != nil:
		return nil, wrap("get "+req.Target.String(), err)
	case !ok:
		return nil, settle.Permanentf("compute-spec: resize: %s does not exist (or inplace does not manage its kind)", req.Target)
	}
	t := controller.TargetOf(w, f.d.Defaults.Load())
	if t.Skip != "" {
		return nil, f.refuseRequest(t, "resize", req.Target, req.Containers, t.Skip)
	}
	ref := w.Ref
	return f.ro.WhenRecordFree(ctx, rollout.Key(ref), func() ([]cloudevents.Event, error) {
		pods, err := f.d.Cache.PodsOf(ref)
		if err != nil {
			return nil, wrap("pods of "+ref.String(), err)
		}
		cands := planner.ResizeCandidates(ref.Kind, pods, req.Containers, ch)
		if !planner.NeedsWork(cands) {
			return nil, f.nothingYet(t, "resize", req.Target, req.Containers, cands, in.Time(),
				seconds(resizeOptions(t, req).VerifySeconds))
		}
		if err := f.ro.Allow(ctx, pods); err != nil {
			return nil, err
		}
		id, now := events.DeriveResizeID(in.ID(), ref), f.d.Now()
		r, planned, err := f.ro.BeginRequest(ctx, ref, "resize", id, func(prev *rollout.Rollout) (*rollout.Rollout, []*rollout.Pod, error) {
			r, err := rollout.BeginResize(prev, id, ref, req, resizeOptions(t, req), now)
			if err != nil {
				return nil, nil, err
			}
			planned := rollout.Plan(r, cands, in.ID(), false, now)
			rollout.SettleResize(r, in.ID(), now)
			return r, planned, nil
		})
		if err != nil {
			return nil, err
		}
		if r.StartedAt.Equal(now) {
			f.ro.EventOn(t.Workload, corev1.EventTypeNormal, EventResizeRequested, "Resizing containers %s in place to %s (resize %s, %d pods, max-unavailable %d)",
				strings.Join(req.Containers, ","), r.Resize.Target(), id, len(r.Pods), r.Options.Budget)
		}
		return f.ro.Advance(ctx, in, r, planned)
	})
}

// resizeOptions are a resize's rollout settings: the workload's budget and
// verify deadline (or the request's); no grace, no pre-pull (nothing is
// pulled, the container keeps running).
func resizeOptions(t controller.Target, req events.ResizeRequestData) rollout.Options {
	o := t.RolloutOptions()
	o.GraceSeconds, o.Prepull = 0, false
	if req.DeadlineSeconds > 0 {
		o.VerifySeconds = req.DeadlineSeconds
	}
	return o
}
