package computespec

import (
	"context"
	"errors"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// onOutcome records how one pod's upgrade ended, once its pod bears that
// out (confirmOutcome), and plans what that allows.
func (f *Function) onOutcome(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	o, err := events.As[events.OutcomeData](in)
	if err != nil {
		return nil, err
	}
	if err := f.confirmOutcome(ctx, in.Type(), o); err != nil {
		return nil, err
	}
	return f.transition(ctx, in, o.Plan.Owner, func(r *rollout.Rollout) {
		rollout.Record(r, in.Type(), o, in.ID(), f.d.Now())
	})
}

// onResume restarts a halted rollout.
func (f *Function) onResume(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	d, err := events.As[events.ResumeData](in)
	if err != nil {
		return nil, err
	}
	if err := replayStarts(in); err != nil {
		return nil, err
	}
	return f.transition(ctx, in, d.Workload, func(r *rollout.Rollout) {
		rollout.Resume(r, f.d.Now())
	})
}

// transition applies change to a workload's rollout, replans from the
// cluster as it is now, and emits what follows.
func (f *Function) transition(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, change func(*rollout.Rollout)) ([]cloudevents.Event, error) {
	return f.replan(ctx, in, ref, change, false)
}

// replan is transition; with ifPlans it writes the record (and emits) only
// when a pod is planned or the phase moves.
func (f *Function) replan(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, change func(*rollout.Rollout), ifPlans bool) ([]cloudevents.Event, error) {
	r, planned, err := f.replanRecord(ctx, in, ref, change, ifPlans)
	if err != nil || r == nil {
		return nil, err
	}
	return f.advance(ctx, in, r, planned)
}

// replanRecord is replan's read, plan and compare-and-swap of the record:
// the rollout as written and the pods it planned (nil: nothing written).
func (f *Function) replanRecord(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, change func(*rollout.Rollout), ifPlans bool) (*rollout.Rollout, []*rollout.Pod, error) {
	key := rollout.Key(ref)
	raw, rev, err := f.d.Store.Get(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	if raw == nil {
		f.d.Log.Info("no rollout for this event; nothing to do", "event", in.ID(), "workload", key)
		return nil, nil, nil
	}
	t, cands, observed, err := f.observe(ctx, ref, raw, rev)
	if err != nil {
		return nil, nil, err
	}
	view, err := f.viewPulls(cands)
	if err != nil {
		return nil, nil, err
	}
	timeout := f.d.Defaults.Load().PrepullTimeout
	step := func(r *rollout.Rollout) ([]*rollout.Pod, error) {
		if r.UpgradeID != observed {
			return nil, errChanged
		}
		phase, wave := r.Phase, r.Wave
		change(r)
		paused := t.Skip != ""
		hold(view, r, cands, timeout, f.d.Now())
		planned := rollout.Plan(r, rollout.StepCandidates(r, cands), in.ID(), paused, f.d.Now())
		rollout.Settle(r, in.ID(), f.d.Now())
		planned = append(planned, rollout.SettleRestart(r, cands, in.ID(), f.d.Now())...)
		rollout.SettleResize(r, in.ID(), f.d.Now())
		if ifPlans && r.Phase == phase && r.Wave == wave {
			return nil, errNoChange
		}
		return planned, nil
	}
	if ifPlans {
		// A wake-up may find nothing to plan and then writes nothing:
		// alone, so that what its step touched is thrown away with it.
		r, planned, err := f.commits.alone(ctx, key, f, step)
		if errors.Is(err, errNoChange) {
			return nil, nil, nil
		}
		return r, planned, err
	}
	// An input's change: written with the others queued for this record
	// in one compare-and-swap (commits). Other replicas still race
	// through the compare-and-swap.
	return f.commits.do(ctx, key, f, step)
}

// observe reads the workload's opt-in and its pods' candidates for the
// rollout's push. A workload that lost its opt-in, or is paused, plans
// nothing more (Skip is set); one that still opts in has its pods' owners
// allowed by the admission policy before any of them is planned.
// raw is the record at revision rev (0: unknown), read only.
func (f *Function) observe(ctx context.Context, ref events.ObjectRef, raw []byte, rev uint64) (Target, []rollout.Candidate, string, error) {
	cur, err := f.d.Decoded.Get(rollout.Key(ref), rev, raw)
	if err != nil {
		return Target{}, nil, "", settle.Permanent(wrap("decode rollout state", err))
	}
	w, ok, err := f.d.Cache.Get(ref)
	if err != nil {
		return Target{}, nil, "", wrap("get "+ref.String(), err)
	}
	if !ok {
		return Target{Skip: "workload deleted"}, nil, cur.UpgradeID, nil
	}
	t := target(w, f.d.Defaults.Load()).undoing(cur.Push)
	pods, err := f.d.Cache.PodsOf(ref)
	if err != nil {
		return t, nil, "", wrap("pods of "+ref.String(), err)
	}
	if t.Skip == "" {
		if err := f.allow(ctx, pods); err != nil {
			return t, nil, "", err
		}
	}
	if cur.Restart != nil {
		return t, planner.RestartCandidates(ref.Kind, pods, cur.Restart.Containers), cur.UpgradeID, nil
	}
	if x := cur.Resize; x != nil {
		ch, err := resize.Parse(x.CPU, x.Memory)
		if err != nil {
			return t, nil, "", settle.Permanent(err)
		}
		return t, planner.ResizeCandidates(ref.Kind, pods, x.Containers, ch), cur.UpgradeID, nil
	}
	return t, f.plans.Candidates(rollout.Key(ref), cur.UpgradeID, ref.Kind, pods, cur.Push, t.Options.Policy), cur.UpgradeID, nil
}

// errChanged: the rollout was superseded between reading the cluster and
// writing the state; the event is retried against the new rollout.
var errChanged = errors.New("compute-spec: the rollout changed while planning; retrying")

// errNoChange: a wake-up found nothing to plan; the record is left as it is.
var errNoChange = errors.New("compute-spec: nothing to plan")
