package patchpod

import (
	"context"
	"errors"
	"fmt"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// EventResize is the reason of the Event on a pod whose containers are
// resized in place.
const EventResize = "InPlaceResize"

// resize carries out a resize plan in two guarded writes: the state
// annotation (tests UID and resourceVersion; it records the resources
// before and after and the restartCounts), then each container's
// resources through pods/resize (tests UID, the container's name and its
// resources). A redelivery after the first write sends what is left of
// the second; nothing is drained: the containers keep running.
func (s *step) resize(ctx context.Context, pod *corev1.Pod) ([]cloudevents.Event, error) {
	if r, err := s.confirm(ctx, pod); err != nil || r != nil {
		if err != nil {
			return nil, err
		}
		return s.withdraw(ctx, pod, r)
	}
	st, _ := inplace.ParseState(pod)
	if st == nil || st.UpgradeID != s.plan.UpgradeID {
		patch, err := inplace.ResizeStatePatch(pod, s.plan, s.f.d.Clock.Now())
		switch {
		case errors.Is(err, inplace.ErrBusy):
			return nil, onWatch(settle.NotYet(s.f.d.BusyRecheck, "%v", err))
		case err != nil:
			return s.refused(ctx, pod, inplace.ReasonChangedByOthers, err.Error())
		}
		if _, err := s.write(ctx, pod, patch, ""); err != nil {
			return nil, err
		}
		return nil, errAgain // read it back: the resize follows from the state
	}
	if st.Phase != inplace.PhasePatched {
		return s.patched(pod.ResourceVersion, st.PatchedAt) // verify has it: report it again
	}
	for _, c := range st.Containers {
		b, ok, err := resize.Patch(pod, string(pod.UID), c.Name, c.Resources.From, c.Resources.To)
		switch {
		case err != nil:
			return s.resizeRejected(ctx, pod, st, err.Error())
		case !ok:
			continue
		}
		out, err := s.write(ctx, pod, b, "resize")
		var rejected errRejected
		switch {
		case errors.As(err, &rejected):
			return s.resizeRejected(ctx, pod, st, rejected.msg)
		case err != nil:
			return nil, err
		}
		s.f.d.Recorder.Eventf(out, corev1.EventTypeNormal, EventResize, "Resizing container %s in place from %s to %s (resize %s)%s",
			c.Name, resize.String(c.Resources.From), resize.String(c.Resources.To), s.plan.UpgradeID, why(s.plan.Resize.Reason))
		pod = out
	}
	s.f.d.Log.Info("pod resized", "pod", s.plan.Pod.String(), "upgrade", s.plan.UpgradeID, "resourceVersion", pod.ResourceVersion)
	return s.patched(pod.ResourceVersion, st.PatchedAt)
}

func why(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// errRejected: the API server refused a write as invalid or forbidden.
type errRejected struct{ msg string }

func (e errRejected) Error() string { return e.msg }

// write sends a JSON patch to the pod (subresource "" or "resize"): a
// failed test means the pod changed (errAgain).
func (s *step) write(ctx context.Context, pod *corev1.Pod, patch []byte, sub string) (*corev1.Pod, error) {
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	out, err := s.f.d.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, subs...)
	switch {
	case inplace.PreconditionFailed(err), apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil, errAgain
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err):
		return nil, errRejected{err.Error()}
	case err != nil:
		return nil, fmt.Errorf("patch pod %s: %w", s.plan.Pod, err)
	}
	s.f.d.Reader.Wrote(out)
	return out, nil
}

// resizeRejected closes a recorded resize the API server will not take
// (or whose container changed under it) as Failed, nothing resized, and
// reports it.
func (s *step) resizeRejected(ctx context.Context, pod *corev1.Pod, st *inplace.State, msg string) ([]cloudevents.Event, error) {
	patch, err := inplace.FinishPatch(pod, *st, inplace.PhaseFailed, ReasonPatchRejected, s.f.d.Clock.Now())
	if err != nil {
		return nil, err
	}
	if _, err := s.write(ctx, pod, patch, ""); err != nil {
		return nil, err
	}
	s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventResize, "Not resizing in place: %s: %s", ReasonPatchRejected, msg)
	return s.failed(ReasonPatchRejected, msg)
}
