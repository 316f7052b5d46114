package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// errAgain: the pod changed under the attempt; read it again.
var errAgain = errors.New("pod changed; read it again")

// errLease: the attempt would act (write the pod, record an Event, report
// an outcome) without the pod's lease; take it and attempt again.
var errLease = errors.New("the decision acts: take the pod's lease")

// step is one delivery's work on one pod.
type step struct {
	f  *Function
	in cloudevents.Event
	// ref names the pod (UID included).
	ref events.PodRef
	// plan is the input's plan (pod.patched); otherwise it is rebuilt from
	// the pod's state.
	plan *events.Plan
	// last is the pod as the input saw it (pod.updated), for when it is gone.
	last *corev1.Pod
	// timer: the input is delivered again until the upgrade ends.
	timer bool
	// leased: this process holds the pod's lease (or there are none), so
	// the attempt may act; without it, only a decision to wait completes.
	leased bool
	// seenRV is the pod's resourceVersion the input saw (patch-pod's write
	// for pod.patched, the watcher's copy for pod.updated): a cached copy
	// older than that is read again from the API server.
	seenRV string
	// readRV is the resourceVersion of the pod the last attempt read.
	readRV string
	// confirmed is the state annotation the guard confirmed last, and
	// asRecorded that state as the rollout record has it (its previous
	// images the record's): what verify decides on and writes while the
	// annotation is still confirmed.
	confirmed  string
	asRecorded *inplace.State
	// wake is when the timer comes back while nothing is decided
	// (nextLook); zero: the Recheck safety net.
	wake time.Duration
	// stableIn is how long until a success (or a finished rollback) waits
	// only for its containers' min-ready time: no change of the pod will
	// say when it has passed.
	stableIn time.Duration
}

// attempt reads the pod and takes the next step of its upgrade.
func (s *step) attempt(ctx context.Context) ([]cloudevents.Event, error) {
	s.readRV = ""
	pod, err := s.read(ctx)
	switch {
	case apierrors.IsNotFound(err):
		pod = nil
	case err != nil:
		return nil, fmt.Errorf("verify %s: get: %w", s.ref, err)
	case string(pod.UID) != s.ref.UID:
		pod = nil // a replacement of the same name is not the pod we verify
	}
	if pod == nil {
		return s.gone(ctx)
	}
	s.readRV = pod.ResourceVersion
	st, err := inplace.ParseState(pod)
	if err != nil {
		return s.gone(ctx)
	}
	if st != nil && s.asRecorded != nil && s.confirmed == pod.Annotations[inplace.StateAnnotation] {
		st = s.asRecorded
	}
	plan, ok := s.planFor(pod, st)
	if !ok {
		return nil, nil
	}
	switch {
	case st == nil:
		if outs, ok, err := s.endRecorded(ctx, plan, nil); ok {
			return outs, err
		}
		return s.outcome(plan, nil, pod, events.UpgradeFailed, events.OutcomeFailed,
			inplace.ReasonChangedByOthers, "the pod's "+inplace.StateAnnotation+" annotation is gone")
	case st.UpgradeID != plan.UpgradeID || !st.Phase.Active():
		return s.ended(ctx, plan, st, pod)
	}
	now, l := s.f.d.Clock.Now(), s.f.limits(plan)
	if st.Resize != nil {
		r := inplace.ResizeProgress(pod, st)
		s.wake = nextLook(pod, st, r, now, l)
		d := resizeDecision(pod, st, r, decide(pod, st, r, now, l))
		return s.act(ctx, plan, st, pod, r, d)
	}
	r := inplace.Progress(pod, st, plan)
	if st.Phase == inplace.PhaseRollingBack {
		r = inplace.RollbackProgress(pod, st)
	}
	s.wake = nextLook(pod, st, r, now, l)
	if r.Verdict == inplace.Succeeded {
		s.stableIn = untilStable(pod, st, now, l.minReady)
	}
	d := gateEarly(pod, st, plan, decide(pod, st, r, now, l))
	if st.Restart != nil {
		d = restartDecision(d)
	}
	return s.act(ctx, plan, st, pod, r, d)
}

// planFor is the plan of this delivery: the input's, or the state's.
func (s *step) planFor(pod *corev1.Pod, st *inplace.State) (events.Plan, bool) {
	if s.plan != nil {
		return *s.plan, true
	}
	if st == nil || !st.Phase.Active() {
		return events.Plan{}, false
	}
	return inplace.PlanFromState(pod, st), true
}

// gone: the pod is deleted or replaced. A timer reports it; pod.updated
// reports it from the pod it saw last when that had an upgrade in flight.
// An upgrade that had ended before is not reported gone (endRecorded): a
// success with no gate to open writes nothing on the pod (close), whose
// state still reads Patched when it is deleted later.
func (s *step) gone(ctx context.Context) ([]cloudevents.Event, error) {
	plan := s.plan
	var last *inplace.State
	if s.last != nil {
		last, _ = inplace.ParseState(s.last)
		if plan == nil && inplace.InFlight(s.last, last) {
			p := inplace.PlanFromState(s.last, last)
			plan = &p
		}
	}
	if plan == nil {
		return nil, nil
	}
	var was *inplace.State
	if last != nil && last.UpgradeID == plan.UpgradeID {
		was = &inplace.State{UpgradeID: plan.UpgradeID, PatchedAt: last.PatchedAt}
	}
	if outs, ok, err := s.endRecorded(ctx, *plan, was); ok {
		return outs, err
	}
	return s.outcome(*plan, nil, nil, events.UpgradeFailed, events.OutcomeFailed,
		inplace.ReasonPodDeleted, fmt.Sprintf("pod %s (uid %s) is gone", plan.Pod, plan.Pod.UID))
}

// endRecorded answers for plan's upgrade, about to be reported failed,
// when it had ended already: this process confirmed its success or
// rollback on the stream (reported.ended): nothing more is said; or the
// rollout record has it over (guard.Ended: the pod's entry, or the end a
// later rollout carries past its own plan of the pod): a timer reports
// that end (the same event, by id, as when it ended; was, if known, is its
// state then), other inputs nothing (recorded). ok is false when neither
// says so (in flight, never recorded, or recorded Deleted): the failure
// stands.
func (s *step) endRecorded(ctx context.Context, plan events.Plan, was *inplace.State) (outs []cloudevents.Event, ok bool, err error) {
	if s.f.reported.ended(plan) {
		return nil, true, nil
	}
	if s.f.d.Guard == nil {
		return nil, false, nil
	}
	if !s.leased {
		// Reading the record is part of acting on the pod: under its lease.
		return nil, true, errLease
	}
	state, err := s.f.d.Guard.Ended(ctx, plan)
	switch {
	case err != nil:
		return nil, true, fmt.Errorf("verify %s: %w", s.ref, err)
	case state == "" || state == string(rollout.Deleted):
		return nil, false, nil
	}
	if was == nil {
		was = &inplace.State{UpgradeID: plan.UpgradeID}
	}
	outs, err = s.recorded(plan, was, nil, state)
	return outs, true, err
}

// ended handles a state that is not this plan's or no longer active: a
// timer reports how the upgrade ended (the same event, by id, as when it
// ended); other inputs do nothing. When another upgrade has taken the pod,
// its state says how this one stood then (inplace.EndBefore): an end the
// pod bears out is reported as that end. An upgrade still under way then,
// or one the state says nothing of, was superseded, unless the rollout
// record has its end (endRecorded): a success with nothing written on the
// pod, whose image someone changed before the next upgrade took it.
func (s *step) ended(ctx context.Context, plan events.Plan, st *inplace.State, pod *corev1.Pod) ([]cloudevents.Event, error) {
	if !s.timer {
		return nil, nil
	}
	if st.UpgradeID == plan.UpgradeID {
		return s.reportEnd(plan, st, pod)
	}
	r, why := inplace.EndBefore(pod, st, plan)
	if r == nil || why != "" {
		var was *inplace.State
		if r != nil {
			was = r.AsState()
		}
		if outs, ok, err := s.endRecorded(ctx, plan, was); ok {
			return outs, err
		}
	}
	switch {
	case r == nil:
		return s.outcome(plan, nil, nil, events.UpgradeFailed, events.OutcomeFailed, inplace.ReasonSuperseded,
			"the pod's state belongs to upgrade "+st.UpgradeID)
	case why != "":
		return s.outcome(plan, r.AsState(), nil, events.UpgradeFailed, events.OutcomeFailed, inplace.ReasonSuperseded, why)
	}
	return s.reportEnd(plan, r.AsState(), nil)
}

// reportEnd reports the end st records of plan's upgrade (pod: nil when
// the pod has moved on to another upgrade).
func (s *step) reportEnd(plan events.Plan, st *inplace.State, pod *corev1.Pod) ([]cloudevents.Event, error) {
	switch st.Phase {
	case inplace.PhaseSucceeded:
		return s.outcome(plan, st, pod, events.UpgradeSucceeded, events.OutcomeSucceeded, st.Reason, st.Message)
	case inplace.PhaseRolledBack:
		return s.outcome(plan, st, pod, events.UpgradeRolledBack, events.OutcomeRolledBack, st.Reason, st.Message)
	}
	return s.outcome(plan, st, pod, events.UpgradeFailed, events.OutcomeFailed, st.Reason, st.Message)
}

// later is the answer while nothing is decided: the timer comes back at
// the next time-bound decision (nextLook), or after the Recheck safety
// net; what the kubelet does meanwhile reaches verify as pod.updated.
func (s *step) later(r inplace.Result) ([]cloudevents.Event, error) {
	if !s.timer {
		if s.stableIn > 0 {
			// Only the min-ready time is ahead: this pod.updated comes
			// back then, rather than the upgrade waiting for the timer's
			// safety net.
			return nil, settle.NotYet(s.stableIn, "%s: running for less than the min-ready time", s.ref)
		}
		return nil, nil
	}
	wake := s.f.d.Recheck
	if s.wake > 0 {
		wake = min(s.wake, wake)
	}
	return nil, settle.NotYet(wake, "%s: %s", r.Reason, r.Message)
}

// read is the pod from the Reader (the cache). A cached copy older than
// what the input saw (another replica's patch, or its watcher's copy, reaches
// this process's cache a moment later) would be judged as it was before
// the patch (no state, or the last upgrade's: changed by others,
// superseded): read waits for the cache to catch up, woken by the pod's
// watch (Changes) within cacheLag, and reads the API server only past
// that, or without Changes.
func (s *step) read(ctx context.Context) (*corev1.Pod, error) {
	key := s.ref.Namespace + "/" + s.ref.Name
	until := time.Now().Add(cacheLag)
	for {
		woken, stop := s.f.changed(key) // asked before reading: a change in between wakes it
		pod, err := s.f.d.Reader.Pod(ctx, s.ref.Namespace, s.ref.Name)
		if err != nil || s.seenRV == "" || !kube.OlderThan(pod.ResourceVersion, s.seenRV) {
			stop()
			return pod, err
		}
		ok := notify.Wait(ctx, woken, time.Until(until))
		stop()
		if !ok {
			break
		}
	}
	live, err := s.f.d.Client.CoreV1().Pods(s.ref.Namespace).Get(ctx, s.ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	s.f.d.Reader.Wrote(live)
	return live, nil
}

// cacheLag bounds a delivery's wait for the cache to show what its input
// saw: past it (a watch stuck, or down) the pod is read from the API
// server. The watch's delay is milliseconds, a moment more on a busy
// machine.
const cacheLag = 2 * time.Second

// changed is Changes.Changed for key, or no channel without Changes.
func (f *Function) changed(key string) (<-chan struct{}, func()) {
	if f.d.Changes == nil {
		return nil, func() {}
	}
	return f.d.Changes.Changed(key)
}
