package inplace

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// FinishGatePatch is FinishPatch and the inplace.dev/ready condition set
// True in one JSON patch, for the pod's status subresource (which takes
// metadata changes but never the spec): the upgrade's last write on a pod
// that declares the gate. It tests the UID, the state annotation as read
// and the type of the condition it replaces (the kubelet may have moved
// the conditions around), so it never opens the gate of another upgrade.
func FinishGatePatch(pod *corev1.Pod, st State, phase Phase, reason string, now time.Time) ([]byte, error) {
	raw, ok := pod.Annotations[StateAnnotation]
	if !ok {
		return nil, settle.Permanentf("finish upgrade on pod %s/%s: it has no %s", pod.Namespace, pod.Name, StateAnnotation)
	}
	gate, _ := GateStatus(pod)
	if st.Phase == phase && gate == corev1.ConditionTrue {
		return nil, fmt.Errorf("finish upgrade %s: already %s: %w", st.UpgradeID, phase, ErrAlreadyApplied)
	}
	ops := []op{testOp("/metadata/uid", string(pod.UID)), testOp(statePath, raw)}
	if st.Phase != phase {
		st.Phase, st.Reason, st.FinishedAt = phase, reason, now.UTC()
		ops = append(ops, replaceOp(statePath, st.Encode()))
	}
	if gate != corev1.ConditionTrue {
		ops = append(ops, gateTrueOps(pod, "in-place upgrade "+string(phase), now)...)
	}
	return marshal(ops)
}

// OpenGatePatch sets the inplace.dev/ready condition True and nothing
// else, for the status subresource, guarded as FinishGatePatch is (the
// UID, the state annotation as read, the condition's type): verify opens
// the gate this way once the kubelet has replaced the upgrade's containers
// (Restarted), before they are ready, so the pod's Ready then follows
// their readiness alone.
func OpenGatePatch(pod *corev1.Pod, msg string, now time.Time) ([]byte, error) {
	raw, ok := pod.Annotations[StateAnnotation]
	if !ok {
		return nil, settle.Permanentf("open gate on pod %s/%s: it has no %s", pod.Namespace, pod.Name, StateAnnotation)
	}
	if gate, _ := GateStatus(pod); gate == corev1.ConditionTrue {
		return nil, fmt.Errorf("open gate on pod %s/%s: %w", pod.Namespace, pod.Name, ErrAlreadyApplied)
	}
	ops := []op{testOp("/metadata/uid", string(pod.UID)), testOp(statePath, raw)}
	return marshal(append(ops, gateTrueOps(pod, msg, now)...))
}

// gateTrueOps set the inplace.dev/ready condition True.
func gateTrueOps(pod *corev1.Pod, msg string, now time.Time) []op {
	cond := corev1.PodCondition{Type: ReadinessGate, Status: corev1.ConditionTrue, Reason: GateReasonDone,
		Message: msg, LastTransitionTime: metav1.NewTime(now.UTC())}
	for i, c := range pod.Status.Conditions {
		if c.Type == ReadinessGate {
			path := fmt.Sprintf("/status/conditions/%d", i)
			return []op{testOp(path+"/type", string(ReadinessGate)), replaceOp(path, cond)}
		}
	}
	if pod.Status.Conditions == nil {
		return []op{testOp("/metadata/resourceVersion", pod.ResourceVersion), addOp("/status/conditions", []corev1.PodCondition{cond})}
	}
	return []op{addOp("/status/conditions/-", cond)}
}
