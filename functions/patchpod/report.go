package patchpod

import (
	"context"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

func (s *step) patched(rv string, at time.Time) ([]cloudevents.Event, error) {
	return s.emit(events.PodPatched, events.PatchedData{Plan: s.plan, ResourceVersion: rv, PatchedAt: at.UTC()})
}

func (s *step) failed(reason, msg string) ([]cloudevents.Event, error) {
	s.f.d.Log.Warn("upgrade not applied", "pod", s.plan.Pod.String(), "upgrade", s.plan.UpgradeID, "reason", reason, "message", msg)
	return s.emit(events.UpgradeFailed, events.OutcomeData{Plan: s.plan, Outcome: events.OutcomeFailed,
		Reason: reason, Message: msg, FinishedAt: s.f.d.Clock.Now().UTC()})
}

// refused reports a pod the patch cannot apply to, leaving it as it is
// (but for the gate this function may have set False).
func (s *step) refused(ctx context.Context, pod *corev1.Pod, reason, msg string) ([]cloudevents.Event, error) {
	if err := s.restoreGate(ctx, pod); err != nil {
		return nil, err
	}
	s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventUpgrade, "Not upgrading in place: %s: %s", reason, msg)
	return s.failed(reason, msg)
}

// upToDate: the pod already runs every planned image (someone else set
// them): the upgrade has nothing left to do.
func (s *step) upToDate(ctx context.Context, pod *corev1.Pod) ([]cloudevents.Event, error) {
	if err := s.restoreGate(ctx, pod); err != nil {
		return nil, err
	}
	return s.emit(events.UpgradeSucceeded, events.OutcomeData{Plan: s.plan, Outcome: events.OutcomeSucceeded,
		Reason: ReasonAlreadyUpToDate, Message: "the pod already runs the planned images",
		FinishedAt: s.f.d.Clock.Now().UTC()})
}

func (s *step) emit(typ string, data any) ([]cloudevents.Event, error) {
	out, err := inplace.StepEvent(s.in, s.plan, typ, events.Source(Name), data)
	if err != nil {
		return nil, settle.Permanent(err)
	}
	return []cloudevents.Event{out}, nil
}
