package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// quiet is how long a stalled rollout (the Waker moves it on at the change
// it waits for) may go unchanged before the watchdog plans it again
// itself: a safety net. The loop may be gone (its event lost or
// dead-lettered, the process restarted), or may never have existed: a
// transition the watchdog made has no event to redeliver.
const quiet = 3 * stallRecheck

// ReasonStalled halts a rollout whose pods wait for a free slot and none
// comes (pods stay NotReady) for the stall deadline.
const ReasonStalled = "ProgressDeadlineExceeded"

// Sweep enforces the deadlines of every rollout that has not completed,
// from durable state only (the rollout record in KV, the pods' state
// annotations in the cluster), so that no lost or dead-lettered event can
// leave a rollout waiting for good. For each pod in flight: an outcome its
// state shows but the rollout never recorded is recorded; a pod deleted or
// replaced is recorded as such; a pod past its deadline is reminded, then
// given up (Failed, reason Deadline: the rollout halts). A stalled rollout
// is planned again, then halted; a template sync is driven on. It returns
// the events to publish: reminders and what the transitions emit.
//
// The sweep never waits on one rollout (sweeping): a step that waits for a
// controller or another worker is tried once, and its "not yet" is left to
// the next sweep, so one stuck rollout cannot hold back the others'
// deadlines.
func (ctl *Rollouts) Sweep(ctx context.Context) ([]cloudevents.Event, error) {
	ctx = sweeping(ctx)
	keys, err := ctl.d.Store.Keys(ctx)
	if err != nil {
		return nil, wrap("watchdog: list rollouts", err)
	}
	sort.Strings(keys)
	var outs []cloudevents.Event
	var errs []error
	for _, key := range keys {
		more, err := ctl.sweepOne(ctx, key)
		if k, _ := settle.Classify(err); err != nil && k != settle.Later {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		outs = append(outs, more...)
	}
	return outs, errors.Join(errs...)
}

// sweepingKey marks a context as the watchdog's sweep (sweeping).
type sweepingKey struct{}

// sweeping marks ctx as the watchdog's: whatever the sweep reaches (a
// template sync's step, a hold's release, the transitions it advances)
// tries a step that waits for a change once, and answers its "not yet" at
// once instead of waiting for the change (waits), as a delivery does. The
// sweep walks every rollout one after another: a wait for one would delay
// the deadlines of all the others, and the next sweep looks again anyway.
func sweeping(ctx context.Context) context.Context {
	return context.WithValue(ctx, sweepingKey{}, true)
}

// waits: work under ctx may wait for a change (a delivery), not the
// watchdog's sweep.
func waits(ctx context.Context) bool { return ctx.Value(sweepingKey{}) == nil }

// watchdogEvent is the input the watchdog's transitions of r are made
// from: one per rollout, so a sweep repeated after a crash re-emits the
// same events (same ids) as the sweep before it.
func watchdogEvent(r *rollout.Rollout) (cloudevents.Event, error) {
	e, err := events.New("watchdog-"+r.UpgradeID, "dev.inplace.rollout.watchdog.v1", events.Source(Name), r.Workload.String(),
		map[string]string{"upgradeID": r.UpgradeID})
	if err == nil {
		e.SetExtension(events.ExtUpgradeID, r.UpgradeID)
	}
	return e, err
}

func (ctl *Rollouts) sweepOne(ctx context.Context, key string) ([]cloudevents.Event, error) {
	raw, _, err := ctl.d.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	r, err := Decode(raw)
	if err != nil || r == nil || r.Phase.Finished() {
		return nil, err
	}
	in, err := watchdogEvent(r)
	if err != nil {
		return nil, err
	}
	now, w := ctl.d.Now(), ctl.watchdog()
	if r.Phase == rollout.AwaitingApproval && r.Approval != nil && !now.Before(r.Approval.ExpiresAt) {
		return ctl.expireApproval(ctx, in, r, now)
	}
	if r.Phase == rollout.Syncing {
		return ctl.driveSync(ctx, in, r, now)
	}
	if err := ctl.releaseHalted(ctx, r); err != nil { // its last outcome's release may have been lost
		return nil, err
	}
	if r.Canaried() { // an analysis step, resumed from the record after a restart
		return ctl.Analyze(ctx, r.Workload)
	}
	pods, err := ctl.d.Cache.PodsOf(r.Workload)
	if err != nil {
		return nil, wrap("pods of "+r.Workload.String(), err)
	}
	checks, reminders, outs, err := ctl.checkInFlight(in, r, pods, now, w)
	if err != nil {
		return nil, err
	}
	halt := r.Phase == rollout.Running && stalled(r) && now.Sub(progressAt(r)) > w.StallDeadline
	replan := r.Phase == rollout.Running && stalled(r) && now.Sub(r.UpdatedAt) > quiet
	if len(checks) == 0 && len(reminders) == 0 && !halt && !replan {
		return outs, nil
	}
	written, planned, err := ctl.replanRecord(ctx, in, r.Workload, func(cur *rollout.Rollout) {
		for _, c := range checks {
			rollout.Record(cur, c.Type, c.Outcome, in.ID(), now)
		}
		for _, c := range reminders {
			rollout.Remind(cur, c.Pod.Name, c.Pod.UID, c.Pod.UpgradeID, c.Since, c.Nudge, now)
		}
		if halt && stalled(cur) {
			rollout.Halt(cur, ReasonStalled, fmt.Sprintf("pods wait for a free slot (max-unavailable %d) and none came for %s",
				cur.Options.Budget, now.Sub(progressAt(cur)).Round(time.Second)), in.ID(), now)
		}
	}, false)
	if err != nil || written == nil {
		return outs, err
	}
	more, err := ctl.Advance(ctx, in, written, planned)
	if err != nil {
		return outs, err
	}
	reminded, err := ctl.remind(in, written, reminders, now)
	return append(append(outs, more...), reminded...), err
}

// checkInFlight looks at each pod in flight: the outcomes to record, the
// reminders to record (each a new try: rollout.Remind), and the reminders
// already recorded, published again (deduplicated unless the first was
// lost).
func (ctl *Rollouts) checkInFlight(in cloudevents.Event, r *rollout.Rollout, pods []*corev1.Pod, now time.Time, w planner.Watchdog) ([]planner.PodCheck, []planner.PodCheck, []cloudevents.Event, error) {
	byName := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		byName[p.Name] = p
	}
	names := make([]string, 0, len(r.Pods))
	for name, p := range r.Pods {
		if p.State == rollout.InFlight {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var checks, reminders []planner.PodCheck
	var outs []cloudevents.Event
	for _, name := range names {
		p, pod := r.Pods[name], byName[name]
		c := planner.CheckPod(r, p, pod, now, w)
		switch c.Kind {
		case planner.OnTime:
			continue
		case planner.LateDispatch, planner.LateVerify:
			c.Pod, c.Live = p, pod
			if rollout.Due(p, c.Since, c.Nudge) {
				reminders = append(reminders, c)
				continue
			}
			e, err := ctl.reminder(in, r, c, now)
			if err != nil {
				return nil, nil, nil, err
			}
			outs = append(outs, e)
		default:
			ctl.d.Log.Warn("watchdog records an outcome", "pod", name, "upgrade", p.UpgradeID, "reason", c.Outcome.Reason, "message", c.Outcome.Message)
			checks = append(checks, c)
		}
	}
	return checks, reminders, outs, nil
}

// remind publishes the reminders recorded in written, each with the try
// the record gave it.
func (ctl *Rollouts) remind(in cloudevents.Event, written *rollout.Rollout, reminders []planner.PodCheck, now time.Time) ([]cloudevents.Event, error) {
	var outs []cloudevents.Event
	for _, c := range reminders {
		p := written.Pods[c.Pod.Name]
		if p == nil || p.State != rollout.InFlight || p.UID != c.Pod.UID || p.UpgradeID != c.Pod.UpgradeID || rollout.Due(p, c.Since, c.Nudge) {
			continue // its outcome came meanwhile
		}
		c.Pod = p
		e, err := ctl.reminder(in, written, c, now)
		if err != nil {
			return outs, err
		}
		ctl.d.Log.Warn("watchdog reminds a late step", "pod", p.Name, "upgrade", p.UpgradeID, "event", e.Type(),
			"reminder", c.Nudge+1, "attempt", p.Attempt())
		outs = append(outs, e)
	}
	return outs, nil
}

// reminder is the event that drives c's late step again, as the try
// c.Pod.Attempt().
func (ctl *Rollouts) reminder(in cloudevents.Event, r *rollout.Rollout, c planner.PodCheck, now time.Time) (cloudevents.Event, error) {
	var e cloudevents.Event
	var err error
	if c.Kind == planner.LateVerify {
		e, err = remindVerify(in, c.Live, c.State, c.Pod.Attempt())
	} else {
		e, err = remindPlan(in, r, c.Pod, now)
	}
	if err != nil {
		return e, settle.Permanent(err)
	}
	return e, nil
}

// remindPlan publishes upgrade.planned again as the pod's recorded try
// (its step ids are that try's: the first try's may have been
// dead-lettered, and its ids are in the dedup window), with a fresh
// planned-at, so pre-pull gives it its full time.
func remindPlan(in cloudevents.Event, r *rollout.Rollout, p *rollout.Pod, now time.Time) (cloudevents.Event, error) {
	plan := planner.PodPlan(r, p)
	plan.PlannedAt = now
	e, err := events.Follow(in, inplace.StepID(plan, events.UpgradePlanned), events.UpgradePlanned, events.Source(Name), plan.Pod.String(), plan)
	if err == nil {
		e.SetExtension(events.ExtUpgradeID, plan.UpgradeID)
	}
	return e, err
}

// remindVerify publishes pod.patched again from the pod's state, as the
// try attempt, so verify takes its next step (its own deadline has passed:
// roll back or fail) and reports it under that try's ids.
func remindVerify(in cloudevents.Event, pod *corev1.Pod, st *inplace.State, attempt int) (cloudevents.Event, error) {
	plan := inplace.PlanFromState(pod, st)
	plan.Attempt = attempt
	d := events.PatchedData{Plan: plan, ResourceVersion: pod.ResourceVersion, PatchedAt: st.PatchedAt}
	e, err := events.Follow(in, inplace.StepID(plan, events.PodPatched), events.PodPatched, events.Source(Name), plan.Pod.String(), d)
	if err == nil {
		e.SetExtension(events.ExtUpgradeID, plan.UpgradeID)
	}
	return e, err
}

// syncQuiet is how long a template sync may go without a recorded step
// before the watchdog drives it itself. A live driver runs again at least
// every maxSyncWait plus its redelivery, but a sync the watchdog settled
// has no input the bus would redeliver: when the process is killed as it
// drives it, nothing else would until the watchdog does. A second driver
// is harmless (each step is a compare-and-swap on the recorded step; the
// loser waits for the winner), so the watchdog need not wait for quiet.
const syncQuiet = 2 * maxSyncWait

// driveSync takes the next step of a template sync whose own loop went
// quiet (its event lost or dead-lettered, its process killed, or the
// watchdog's own transition), and completes the rollout when the sync is
// done. A sync is never abandoned half-way: every step moves towards
// restoring the workload, and each is driven until it is done. From the
// sweep it takes the steps that are ready at once and stops at the first
// that waits (or when another worker of this process is driving it): the
// next sweep goes on from the step recorded.
func (ctl *Rollouts) driveSync(ctx context.Context, in cloudevents.Event, r *rollout.Rollout, now time.Time) ([]cloudevents.Event, error) {
	if now.Sub(r.UpdatedAt) <= syncQuiet {
		return nil, nil
	}
	done, err := ctl.syncTemplate(ctx, r)
	if err != nil {
		return nil, err
	}
	return ctl.endEvents(in, done, events.RolloutCompleted)
}

func progressAt(r *rollout.Rollout) time.Time {
	if r.ProgressAt.IsZero() {
		return r.StartedAt
	}
	return r.ProgressAt
}
