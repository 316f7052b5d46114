package controller

import (
	"context"
	"errors"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// onOutcome records how one pod's upgrade ended, once its pod bears that
// out (confirmOutcome), and plans what that allows.
func (ctl *Rollouts) onOutcome(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	o, err := events.AsIn[events.OutcomeData](ctx, in)
	if err != nil {
		return nil, err
	}
	confirmed, seen, err := ctl.confirmOutcome(ctx, in.Type(), o)
	if err != nil {
		return nil, err
	}
	// An outcome the record holds already (another replica's verify
	// reported it too, or it came late) records nothing: it only wakes the
	// rollout up, and the record is written only when that plans a pod or
	// moves the phase. A redelivery of the input that recorded it still
	// re-emits what it did (the record bears its id).
	again := confirmed == nil && seen != nil && !bears(seen, in.ID())
	// The record written may be newer than the one the outcome was
	// confirmed on (a watched copy lags): what it would record must be
	// what was confirmed.
	check := func(r *rollout.Rollout) error {
		if p := rollout.Recordable(r, in.Type(), o); p != nil && !sameAttempt(p, confirmed) {
			return errChanged
		}
		if again && bears(r, in.ID()) {
			return errChanged
		}
		return nil
	}
	r, planned, err := ctl.replanChecked(ctx, in, o.Plan.Owner, check, func(r *rollout.Rollout) {
		rollout.Record(r, in.Type(), o, in.ID(), ctl.d.Now())
	}, again)
	if err != nil || r == nil {
		return nil, err
	}
	return ctl.Advance(ctx, in, r, planned)
}

// bears: r holds what the input id did when it was handled (a pod it
// planned still in flight, the halt or the completion it made), which a
// redelivery of it emits again.
func bears(r *rollout.Rollout, id string) bool {
	if r.HaltedBy == id || r.SettledBy == id {
		return true
	}
	for _, p := range r.Pods {
		if p.State == rollout.InFlight && p.PlannedBy == id && p.UpgradeID == r.UpgradeID {
			return true
		}
	}
	return false
}

// sameAttempt: p is the pod entry c was confirmed as (nil c: none was).
func sameAttempt(p, c *rollout.Pod) bool {
	return c != nil && p.UID == c.UID && p.UpgradeID == c.UpgradeID && p.State == c.State &&
		p.Attempts == c.Attempts && p.PatchedAt.Equal(c.PatchedAt)
}

// onResume restarts a halted rollout.
func (ctl *Rollouts) onResume(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	d, err := events.As[events.ResumeData](in)
	if err != nil {
		return nil, err
	}
	if err := ReplayStarts(in); err != nil {
		return nil, err
	}
	return ctl.transition(ctx, in, d.Workload, func(r *rollout.Rollout) {
		rollout.Resume(r, ctl.d.Now())
	})
}

// transition applies change to a workload's rollout, replans from the
// cluster as it is now, and emits what follows.
func (ctl *Rollouts) transition(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, change func(*rollout.Rollout)) ([]cloudevents.Event, error) {
	return ctl.replan(ctx, in, ref, change, false)
}

// replan is transition; with ifPlans it writes the record (and emits) only
// when a pod is planned or the phase moves.
func (ctl *Rollouts) replan(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, change func(*rollout.Rollout), ifPlans bool) ([]cloudevents.Event, error) {
	r, planned, err := ctl.replanRecord(ctx, in, ref, change, ifPlans)
	if err != nil || r == nil {
		return nil, err
	}
	return ctl.Advance(ctx, in, r, planned)
}

// replanRecord is replan's read, plan and compare-and-swap of the record:
// the rollout as written and the pods it planned (nil: nothing written).
func (ctl *Rollouts) replanRecord(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, change func(*rollout.Rollout), ifPlans bool) (*rollout.Rollout, []*rollout.Pod, error) {
	return ctl.replanChecked(ctx, in, ref, nil, change, ifPlans)
}

// replanChecked is replanRecord with check (nil: none) asked first, on
// the record about to be written: its error leaves the record as it is
// and is the delivery's.
func (ctl *Rollouts) replanChecked(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, check func(*rollout.Rollout) error,
	change func(*rollout.Rollout), ifPlans bool) (*rollout.Rollout, []*rollout.Pod, error) {
	key := rollout.Key(ref)
	raw, _, err := ctl.readRaw(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	if raw == nil {
		ctl.d.Log.Info("no rollout for this event; nothing to do", "event", in.ID(), "workload", key)
		return nil, nil, nil
	}
	// The cluster is observed once for the changes written together
	// (commits): by their writer, under the key's lock, right before the
	// write.
	look := func(ctx context.Context) (*observation, error) { return ctl.observation(ctx, ref) }
	step := func(r *rollout.Rollout, o *observation) ([]*rollout.Pod, error) {
		if r.UpgradeID != o.upgradeID {
			return nil, errChanged
		}
		if check != nil {
			if err := check(r); err != nil {
				return nil, err
			}
		}
		phase, wave := r.Phase, r.Wave
		change(r)
		paused := o.t.Skip != ""
		held := HoldPulling(o.pulls, r, o.cands, o.timeout, ctl.d.Now())
		planned := rollout.Plan(r, rollout.StepCandidates(r, held), in.ID(), paused, ctl.d.Now())
		rollout.Settle(r, in.ID(), ctl.d.Now())
		planned = append(planned, rollout.SettleRequest(r, held, in.ID(), ctl.d.Now())...)
		if ifPlans && r.Phase == phase && r.Wave == wave {
			return nil, errNoChange
		}
		return planned, nil
	}
	if ifPlans {
		// A wake-up may find nothing to plan and then writes nothing:
		// alone, so that what its step touched is thrown away with it.
		r, planned, err := ctl.commits.alone(ctx, key, ctl, look, step)
		if errors.Is(err, errNoChange) {
			return nil, nil, nil
		}
		return r, planned, err
	}
	// An input's change: written with the others queued for this record
	// in one compare-and-swap (commits). Other replicas still race
	// through the compare-and-swap.
	return ctl.commits.do(ctx, key, ctl, look, step)
}

// An observation is what a record's steps plan from: the workload's
// target, its pods' candidates for the rollout (upgradeID) the record held
// when they were read, their nodes' pulls, the pre-pull timeout.
type observation struct {
	t         Target
	cands     []rollout.Candidate
	upgradeID string
	pulls     *PullView
	timeout   time.Duration
}

// observation reads the record of ref and observes the cluster for it.
func (ctl *Rollouts) observation(ctx context.Context, ref events.ObjectRef) (*observation, error) {
	raw, rev, err := ctl.readRaw(ctx, rollout.Key(ref))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, errNoRecord
	}
	t, cands, observed, err := ctl.observe(ctx, ref, raw, rev)
	if err != nil {
		return nil, err
	}
	pulls, err := ctl.ViewPulls(cands)
	if err != nil {
		return nil, err
	}
	return &observation{t: t, cands: cands, upgradeID: observed, pulls: pulls, timeout: ctl.d.Defaults.Load().PrepullTimeout}, nil
}

// observe reads the workload's opt-in and its pods' candidates for the
// rollout's push. A workload that lost its opt-in, or is paused, plans
// nothing more (Skip is set); one that still opts in has its pods' owners
// allowed by the admission policy before any of them is planned.
// raw is the record at revision rev (0: unknown), read only.
func (ctl *Rollouts) observe(ctx context.Context, ref events.ObjectRef, raw []byte, rev uint64) (Target, []rollout.Candidate, string, error) {
	cur, err := ctl.d.Decoded.Get(rollout.Key(ref), rev, raw)
	if err != nil {
		return Target{}, nil, "", settle.Permanent(wrap("decode rollout state", err))
	}
	w, ok, err := ctl.d.Cache.Get(ref)
	if err != nil {
		return Target{}, nil, "", wrap("get "+ref.String(), err)
	}
	if !ok {
		return Target{Skip: "workload deleted"}, nil, cur.UpgradeID, nil
	}
	t := TargetOf(w, ctl.d.Defaults.Load()).Undoing(cur.Push)
	pods, err := ctl.d.Cache.PodsOf(ref)
	if err != nil {
		return t, nil, "", wrap("pods of "+ref.String(), err)
	}
	if t.Skip == "" {
		if err := ctl.Allow(ctx, pods); err != nil {
			return t, nil, "", err
		}
	}
	if x := cur.Request(); x != nil {
		cands, err := planner.RequestCandidates(ref.Kind, pods, x)
		return t, cands, cur.UpgradeID, err
	}
	return t, ctl.plans.Candidates(rollout.Key(ref), cur.UpgradeID, ref.Kind, pods, cur.Push, t.Options.Policy), cur.UpgradeID, nil
}

// errChanged: the rollout was superseded between reading the cluster and
// writing the state; the event is retried against the new rollout.
var errChanged = errors.New("compute-spec: the rollout changed while planning; retrying")

// errNoChange: a wake-up found nothing to plan; the record is left as it is.
var errNoChange = errors.New("compute-spec: nothing to plan")

// ReplayStarts refuses a replayed push or resume that does not ask to
// start a real rollout (`inplace replay --start-rollouts`).
func ReplayStarts(in cloudevents.Event) error {
	name := events.Ext(in, events.ExtReplay)
	if name == "" || events.Ext(in, events.ExtReplayStart) == "true" {
		return nil
	}
	return settle.Permanentf("compute-spec: %s is replay %s, and a replay starts no rollout unless it asks to (inplace replay --start-rollouts)",
		events.Short(in.Type()), name)
}
