package patchpod

import (
	"context"
	"errors"
	"fmt"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
)

// errNoGuard: a function built without a guard writes nothing.
var errNoGuard = &guard.Refusal{Reason: guard.ReasonNotPlanned, Message: "patch-pod has no rollout records to check plans against"}

// confirm asks the guard whether the plan is compute-spec's and still
// allowed, before every write. A plan the record does not confirm is
// refused with a Warning Event and dead-lettered (a permanent error), the
// pod untouched but for the gate this function set False for the plan's
// upgrade when the record has that upgrade of the pod no longer in flight
// (ended while the pod drained): nothing else would open it. A real plan
// the owner no longer allows is returned as withdrawn, for attempt to
// report.
func (s *step) confirm(ctx context.Context, pod *corev1.Pod) (withdrawn *guard.Refusal, err error) {
	err = errNoGuard
	if s.f.d.Guard != nil {
		err = s.f.d.Guard.Plan(ctx, pod, s.plan)
	}
	var r *guard.Refusal
	if err == nil || !errors.As(err, &r) {
		return nil, err
	}
	s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventRefused, "Refused in-place upgrade %s: %s: %s",
		s.plan.UpgradeID, r.Reason, r.Message)
	s.f.d.Log.Warn("plan refused", "pod", s.plan.Pod.String(), "upgrade", s.plan.UpgradeID, "reason", r.Reason, "message", r.Message)
	if r.Withdrawn {
		return r, nil
	}
	if r.NotInFlight {
		if err := s.restoreGate(ctx, pod); err != nil {
			return nil, err
		}
	}
	return nil, settle.Permanent(fmt.Errorf("patch pod %s: %w", s.plan.Pod, r))
}

// withdraw reports a plan the owner no longer allows as failed, after
// putting back the gate this function set False for it: the record
// confirmed the upgrade is ours, so undoing our own drain is no trespass.
func (s *step) withdraw(ctx context.Context, pod *corev1.Pod, r *guard.Refusal) ([]cloudevents.Event, error) {
	if err := s.restoreGate(ctx, pod); err != nil {
		return nil, err
	}
	return s.failed(r.Reason, r.Message)
}

// over reports whether a pod busy with another upgrade's Patched state may
// be patched all the same: the rollout record confirms this plan, and the
// record moves a pod to a new upgrade only once the last one ended. Any
// doubt (a rollback under way, a plan the record does not confirm, the
// record out of reach) keeps the pod busy: the plan waits.
func (s *step) over(ctx context.Context, pod *corev1.Pod, st *inplace.State) bool {
	if st == nil || st.Phase != inplace.PhasePatched || s.f.d.Guard == nil {
		return false
	}
	return s.f.d.Guard.Plan(ctx, pod, s.plan) == nil
}
