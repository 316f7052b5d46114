package patchpod

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/pkg/inplace"
	"github.com/inplace-dev/inplace/pkg/settle"
)

// drain sets the gate False and waits the grace period from its
// lastTransitionTime. It returns nil when the patch may go, errAgain when
// the pod must be read again (the gate just went False with no grace), or
// "not yet".
func (s *step) drain(ctx context.Context, pod *corev1.Pod, now time.Time) error {
	grace := time.Duration(s.plan.GraceSeconds) * time.Second
	since, ok := gateFalseSince(pod)
	if !ok {
		msg := fmt.Sprintf("in-place upgrade %s to %s", s.plan.UpgradeID, s.plan.Target)
		if err := s.setGate(ctx, pod, corev1.ConditionFalse, inplace.GateReasonStart, msg, now); err != nil {
			return err
		}
		s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventUpgrade,
			"Readiness gate %s set False; patching in %s", inplace.ReadinessGate, grace)
		if grace == 0 {
			return errAgain
		}
		return settle.NotYet(grace+time.Second, "draining pod %s for %s", s.plan.Pod, grace)
	}
	if wait := drainedAt(since, grace).Sub(now); wait > 0 {
		return settle.NotYet(wait, "draining pod %s: %s left", s.plan.Pod, wait.Round(time.Millisecond))
	}
	return nil
}

// drainedAt is when a gate False since t has been False for grace. The
// lastTransitionTime has second precision (truncated), so a second is
// added: the pod is never patched before grace has really passed.
func drainedAt(t time.Time, grace time.Duration) time.Time {
	if grace == 0 {
		return t
	}
	return t.Add(grace + time.Second)
}

// gateFalseSince is when the gate condition went False, if it is False.
func gateFalseSince(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == inplace.ReadinessGate && c.Status == corev1.ConditionFalse {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// setGate writes the gate condition through the status subresource, pinned
// to the pod's UID.
func (s *step) setGate(ctx context.Context, pod *corev1.Pod, status corev1.ConditionStatus, reason, msg string, now time.Time) error {
	patch := inplace.GatePatch(pod.UID, status, reason, msg, now)
	_, err := s.f.d.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if err != nil {
		return fmt.Errorf("patch pod %s: set gate %s: %w", s.plan.Pod, status, err)
	}
	return nil
}

// restoreGate sets the gate True again when this function set it False and
// the upgrade will not go ahead, so the pod is not left NotReady.
func (s *step) restoreGate(ctx context.Context, pod *corev1.Pod) error {
	for _, c := range pod.Status.Conditions {
		if c.Type == inplace.ReadinessGate && c.Status == corev1.ConditionFalse && c.Reason == inplace.GateReasonStart {
			return s.setGate(ctx, pod, corev1.ConditionTrue, inplace.GateReasonDone, "in-place upgrade did not go ahead", s.f.d.Clock.Now())
		}
	}
	return nil
}
