package computespec

import (
	"context"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/planner"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// containerRequest is one request on named containers of a workload's
// pods (a restart, a resize) as compute-spec takes it on; each kind's file
// fills it in from its event.
type containerRequest struct {
	what       string // "restart", "resize": in Events and errors
	target     events.ObjectRef
	containers []string
	// id derives the request's id on the workload from the input's.
	id func(inputID string, w events.ObjectRef) string
	// record is the request's rollout record.
	record func(id string) rollout.Request
	// options are its rollout settings for the workload.
	options func(controller.Target) rollout.Options
	// reason and verb make the Event on the workload when it is taken on
	// ("Restarting containers app in place"), which names the rollout's
	// target too when toTarget is set.
	reason, verb string
	toTarget     bool
}

// onContainers starts a request on containers: the workload (or bare pod)
// must opt in; its pods are planned in waves within its budget, like a
// push, each named container as the request's kind says.
func (f *Function) onContainers(ctx context.Context, in cloudevents.Event, k containerRequest) ([]cloudevents.Event, error) {
	if err := controller.ReplayStarts(in); err != nil {
		return nil, err
	}
	w, ok, err := f.d.Cache.Get(k.target)
	switch {
	case err != nil:
		return nil, wrap("get "+k.target.String(), err)
	case !ok:
		return nil, settle.Permanentf("compute-spec: %s: %s does not exist (or inplace does not manage its kind)", k.what, k.target)
	}
	t := controller.TargetOf(w, f.d.Defaults.Load())
	if t.Skip != "" {
		return nil, f.refuseRequest(t, k.what, k.target, k.containers, t.Skip)
	}
	ref := w.Ref
	return f.ro.WhenRecordFree(ctx, rollout.Key(ref), func() ([]cloudevents.Event, error) {
		pods, err := f.d.Cache.PodsOf(ref)
		if err != nil {
			return nil, wrap("pods of "+ref.String(), err)
		}
		id, opts := k.id(in.ID(), ref), k.options(t)
		cands, err := planner.RequestCandidates(ref.Kind, pods, k.record(id))
		if err != nil {
			return nil, err
		}
		if !planner.NeedsWork(cands) {
			return nil, f.nothingYet(t, k.what, k.target, k.containers, cands, in.Time(), seconds(opts.VerifySeconds))
		}
		if err := f.ro.Allow(ctx, pods); err != nil {
			return nil, err
		}
		now := f.d.Now()
		r, planned, err := f.ro.BeginRequest(ctx, ref, k.what, id, func(prev *rollout.Rollout) (*rollout.Rollout, []*rollout.Pod, error) {
			r, err := rollout.BeginRequest(prev, k.record(id), ref, opts, now)
			if err != nil {
				return nil, nil, err
			}
			planned := rollout.Plan(r, rollout.StepCandidates(r, cands), in.ID(), false, now)
			return r, append(planned, rollout.SettleRequest(r, cands, in.ID(), now)...), nil
		})
		if err != nil {
			return nil, err
		}
		if r.StartedAt.Equal(now) {
			to := ""
			if k.toTarget {
				to = " to " + r.Target()
			}
			f.ro.EventOn(t.Workload, corev1.EventTypeNormal, k.reason, "%s containers %s in place%s (%s %s, %d pods, max-unavailable %d)",
				k.verb, strings.Join(k.containers, ","), to, k.what, id, len(r.Pods), r.Options.Budget)
		}
		return f.ro.Advance(ctx, in, r, planned)
	})
}

// refuseRequest records why a restart or resize request (what) of
// containers of target is refused (a Warning Event on the workload) and
// returns the permanent error for its dead letter.
func (f *Function) refuseRequest(t controller.Target, what string, target events.ObjectRef, containers []string, why string) error {
	f.d.Log.Warn(what+" refused", "workload", target.String(), "why", why)
	names := strings.Join(containers, ",")
	if obj, ok := t.Workload.Object.(runtime.Object); ok && f.d.Recorder != nil {
		f.d.Recorder.Eventf(obj, corev1.EventTypeWarning, EventRefused, "Refused %s of %s: %s", what, names, why)
	}
	return settle.Permanentf("compute-spec: %s of %s in %s refused: %s", what, names, target, why)
}
