package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/resize"
)

// Event reasons and outcome reasons of a resize (a
// container.resize.requested).
const (
	EventResized      = "InPlaceResized"
	EventResizeFailed = "InPlaceResizeFailed"
	EventResizeBack   = "InPlaceResizeBack"
)

// resizeDecision is decide on a resize's progress; a resize that is not
// sent back yet while rolling back is sent again.
func resizeDecision(pod *corev1.Pod, st *inplace.State, r inplace.Result, d decision) decision {
	switch {
	case st.Phase == inplace.PhaseRollingBack && r.Reason == inplace.ReasonNotResizedBack && (d.act == wait || d.act == fail):
		return decision{rollback, st.Reason, st.Message}
	case d.act == succeed:
		d.reason = inplace.ReasonResized
	}
	return d
}

// resizeBack moves the state to RollingBack, then resizes each container
// back to its recorded resources through pods/resize.
func (s *step) resizeBack(ctx context.Context, plan events.Plan, st *inplace.State, pod *corev1.Pod,
	r inplace.Result, d decision) ([]cloudevents.Event, error) {
	if st.Phase == inplace.PhasePatched {
		patch, err := inplace.ResizeBackPatch(pod, st, d.reason, d.message, s.f.d.Clock.Now())
		if err != nil && !errors.Is(err, inplace.ErrAlreadyApplied) {
			return nil, err
		}
		if err == nil {
			out, err := s.patchPod(ctx, pod, patch, "")
			if err != nil {
				return nil, err
			}
			pod = out
		}
	}
	for _, c := range st.Containers {
		b, ok, err := resize.Patch(pod, string(pod.UID), c.Name, c.Resources.To, c.Resources.From)
		switch {
		case err != nil:
			d = decision{fail, inplace.ReasonChangedByOthers, fmt.Sprintf("%s: %s; cannot resize back: %v", d.reason, d.message, err)}
			return s.finish(ctx, plan, st, pod, inplace.PhaseFailed, d)
		case !ok:
			continue
		}
		if _, err := s.patchPod(ctx, pod, b, "resize"); err != nil {
			return nil, err
		}
		s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventResizeBack, "Resizing container %s back to %s: %s: %s",
			c.Name, resize.String(c.Resources.From), d.reason, d.message)
	}
	s.f.d.Log.Warn("resizing back", "pod", plan.Pod.String(), "upgrade", plan.UpgradeID, "reason", d.reason, "message", d.message)
	return s.later(r)
}

// patchPod sends a JSON patch to the pod or its subresource sub.
func (s *step) patchPod(ctx context.Context, pod *corev1.Pod, patch []byte, sub string) (*corev1.Pod, error) {
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	out, err := s.f.d.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, subs...)
	switch {
	case inplace.PreconditionFailed(err), apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil, errAgain
	case err != nil:
		return nil, fmt.Errorf("verify %s: patch %s: %w", s.ref, strings.TrimPrefix(sub+" ", " "), err)
	}
	s.f.d.Reader.Wrote(out)
	return out, nil
}

// resizeEvent records the end of a resize on the pod, in the kubelet's
// words.
func (s *step) resizeEvent(pod *corev1.Pod, plan events.Plan, st *inplace.State, phase inplace.Phase, d decision) {
	for _, c := range st.Containers {
		switch phase {
		case inplace.PhaseSucceeded:
			s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventResized, "Resized container %s in place to %s (resize %s)",
				c.Name, resize.String(c.Resources.To), plan.UpgradeID)
		case inplace.PhaseRolledBack:
			s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventResizeFailed, "Resize of container %s to %s failed and was undone: %s: %s (resize %s)",
				c.Name, resize.String(c.Resources.To), d.reason, d.message, plan.UpgradeID)
		default:
			s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventResizeFailed, "Resize of container %s to %s failed: %s: %s (resize %s)",
				c.Name, resize.String(c.Resources.To), d.reason, d.message, plan.UpgradeID)
		}
	}
}

// resizeFinished records the end of a resize on the pod and reports it.
func (s *step) resizeFinished(pod *corev1.Pod, plan events.Plan, st, next *inplace.State, phase inplace.Phase, d decision) ([]cloudevents.Event, error) {
	s.resizeEvent(pod, plan, st, phase, d)
	switch phase {
	case inplace.PhaseSucceeded:
		return s.outcome(plan, next, pod, events.UpgradeSucceeded, events.OutcomeSucceeded, d.reason, d.message)
	case inplace.PhaseRolledBack:
		return s.outcome(plan, next, pod, events.UpgradeRolledBack, events.OutcomeRolledBack, d.reason, d.message)
	}
	return s.outcome(plan, next, pod, events.UpgradeFailed, events.OutcomeFailed, d.reason, d.message)
}
