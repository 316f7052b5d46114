package inplace

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// ResizeStatePatch is the RFC 6902 patch that records a resize plan in the
// pod's inplace.dev/state annotation before the resize itself is sent
// (through pods/resize, which takes nothing but resources): it tests the
// pod's UID and resourceVersion and records, per container, the resources
// before and after, its containerID and restartCount (what the
// resizePolicy's restart is judged against).
//
// Like Patch it returns ErrAlreadyApplied when the pod already carries this
// plan, an error wrapping ErrBusy while another change of the pod is still
// active, and a permanent error when the pod is not the planned one.
func ResizeStatePatch(pod *corev1.Pod, plan events.Plan, now time.Time) ([]byte, error) {
	if plan.Resize == nil {
		return nil, settle.Permanentf("resize pod %s: the plan is not a resize", plan.Pod)
	}
	if err := checkPatchable(pod, plan); err != nil {
		return nil, err
	}
	st := newState(pod, plan, now)
	for _, cp := range plan.Containers {
		if cp.Resources == nil {
			return nil, settle.Permanentf("resize pod %s: container %q has no resources in the plan", plan.Pod, cp.Name)
		}
		c, ok := findContainer(&pod.Spec, "/spec", cp.Name)
		if !ok || c.Sidecar {
			return nil, settle.Permanentf("resize pod %s: container %q is gone", plan.Pod, cp.Name)
		}
		cs := previous(pod, c, cp)
		cs.Resources = cp.Resources
		st.Containers = append(st.Containers, cs)
	}
	ops := []op{
		testOp("/metadata/uid", string(pod.UID)),
		testOp("/metadata/resourceVersion", pod.ResourceVersion),
	}
	ops = append(ops, setKeyOps("", "/metadata/annotations", pod.Annotations, StateAnnotation, st.Encode())...)
	return marshal(ops)
}

// ResizeBackPatch moves the resize recorded in st to RollingBack with
// reason and message, noting each container's restartCount as it is now
// (the resize back is judged against it); guarded by a test of the state
// as read. The resize back itself goes through pods/resize.
func ResizeBackPatch(pod *corev1.Pod, st *State, reason, message string, now time.Time) ([]byte, error) {
	raw, ok := pod.Annotations[StateAnnotation]
	switch {
	case !ok || st == nil || st.Resize == nil:
		return nil, settle.Permanentf("resize back pod %s/%s: it has no resize in %s", pod.Namespace, pod.Name, StateAnnotation)
	case st.Phase != PhasePatched:
		return nil, fmt.Errorf("resize back pod %s/%s: resize %s is %s: %w", pod.Namespace, pod.Name, st.UpgradeID, st.Phase, ErrAlreadyApplied)
	}
	next := *st
	next.Containers = append([]ContainerState(nil), st.Containers...)
	next.Phase, next.Reason, next.Message, next.RollbackAt = PhaseRollingBack, reason, message, now.UTC()
	for i := range next.Containers {
		if cs := ContainerStatus(pod, next.Containers[i].Name); cs != nil {
			next.Containers[i].RollbackContainerID, next.Containers[i].RollbackRestartCount = cs.ContainerID, cs.RestartCount
		}
	}
	return marshal([]op{
		testOp("/metadata/uid", string(pod.UID)),
		testOp(statePath, raw),
		replaceOp(statePath, next.Encode()),
	})
}
