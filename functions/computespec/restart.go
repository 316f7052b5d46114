package computespec

import (
	"context"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// EventRestartRequested is the reason of the Event on a workload whose
// restart request was taken on.
const EventRestartRequested = "InPlaceRestartRequested"

// onRestart starts a restart request: the workload (or bare pod) must opt
// in; its pods are planned in waves within its budget, like a push, each
// container switched to the other reference of the bytes it runs.
func (f *Function) onRestart(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	req, err := events.As[events.RestartRequestData](in)
	if err != nil {
		return nil, err
	}
	if err := controller.ReplayStarts(in); err != nil {
		return nil, err
	}
	w, ok, err := f.d.Cache.Get(req.Target)
	switch {
	case err != nil:
		return nil, wrap("get "+req.Target.String(), err)
	case !ok:
		return nil, settle.Permanentf("compute-spec: restart: %s does not exist (or inplace does not manage its kind)", req.Target)
	}
	t := controller.TargetOf(w, f.d.Defaults.Load())
	if t.Skip != "" {
		return nil, f.refuseRequest(t, "restart", req.Target, req.Containers, t.Skip)
	}
	ref := w.Ref
	return f.ro.WhenRecordFree(ctx, rollout.Key(ref), func() ([]cloudevents.Event, error) {
		pods, err := f.d.Cache.PodsOf(ref)
		if err != nil {
			return nil, wrap("pods of "+ref.String(), err)
		}
		cands := planner.RestartCandidates(ref.Kind, pods, req.Containers)
		if !planner.NeedsWork(cands) {
			return nil, f.nothingYet(t, "restart", req.Target, req.Containers, cands, in.Time(),
				seconds(restartOptions(t, req.Strategy).VerifySeconds))
		}
		if err := f.ro.Allow(ctx, pods); err != nil {
			return nil, err
		}
		id, now := events.DeriveRestartID(in.ID(), ref), f.d.Now()
		r, planned, err := f.ro.BeginRequest(ctx, ref, "restart", id, func(prev *rollout.Rollout) (*rollout.Rollout, []*rollout.Pod, error) {
			r, err := rollout.BeginRestart(prev, id, ref, req, restartOptions(t, req.Strategy), now)
			if err != nil {
				return nil, nil, err
			}
			planned := rollout.Plan(r, rollout.StepCandidates(r, cands), in.ID(), false, now)
			return r, append(planned, rollout.SettleRestart(r, cands, in.ID(), now)...), nil
		})
		if err != nil {
			return nil, err
		}
		if r.StartedAt.Equal(now) {
			f.ro.EventOn(t.Workload, corev1.EventTypeNormal, EventRestartRequested, "Restarting containers %s in place (restart %s, %d pods, max-unavailable %d)",
				strings.Join(req.Containers, ","), id, len(r.Pods), r.Options.Budget)
		}
		return f.ro.Advance(ctx, in, r, planned)
	})
}

// restartOptions are a restart's rollout settings: the workload's budget,
// the strategy's grace, deadline and minimum started time; no pre-pull (the
// bytes are on the node: the container runs them).
func restartOptions(t controller.Target, s events.RestartStrategy) rollout.Options {
	o := t.RolloutOptions()
	o.GraceSeconds, o.Prepull = s.UnreadyGracePeriodSeconds, false
	o.MinReadySeconds = max(o.MinReadySeconds, s.MinStartedSeconds)
	if s.ActiveDeadlineSeconds > 0 {
		o.VerifySeconds = s.ActiveDeadlineSeconds
	}
	return o
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
