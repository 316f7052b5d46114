package inplace

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonReadinessGatesNotReady is the reason the kubelet gives the pod's
// Ready condition when its containers are ready and a readiness gate is
// not True (pkg/kubelet/status, v1.35).
const ReasonReadinessGatesNotReady = "ReadinessGatesNotReady"

// GateFalseReadyPatch is GatePatch setting the gate False and, when the pod
// is Ready now with its containers ready, the pod's Ready condition False
// as the kubelet itself would write it once it sees the gate: the same
// status, reason and message (GeneratePodReadyCondition, v1.35). The
// kubelet answers a status write that leaves Ready other than it would
// compute by syncing the pod (HandlePodReconcile, NeedToReconcilePodReadiness);
// a sync begun for the gate alone makes the image patch that follows wait
// for the next PLEG relist, up to a second, before the kubelet acts on it
// (a pod worker waits for a runtime cache newer than its last sync). With
// Ready written as the kubelet computes it, the gate's write starts no sync,
// and the kubelet takes the patch up in the sync the patch itself starts.
// It also takes the pod out of its Services without waiting for the
// kubelet. With ok false the pod is not Ready with ready containers (Ready
// already False, or no Ready condition): the gate alone is written.
func GateFalseReadyPatch(pod *corev1.Pod, reason, message string, now time.Time) (patch []byte, ok bool) {
	msg, ok := readyFalseMessage(pod)
	if !ok {
		return GatePatch(pod.UID, corev1.ConditionFalse, reason, message, now), false
	}
	t := metav1.NewTime(now.UTC())
	b := conditionsPatch(pod.UID,
		condition{Type: ReadinessGate, Status: corev1.ConditionFalse, Reason: reason, Message: message, LastTransitionTime: t},
		condition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: ReasonReadinessGatesNotReady, Message: msg, LastTransitionTime: t})
	return b, true
}

// readyFalseMessage is the message of the Ready condition the kubelet
// computes for pod once its inplace.dev/ready condition is False, when the
// pod is Ready now and its containers are: one phrase per readiness gate
// not True, in the order the spec lists them, joined by ", ".
func readyFalseMessage(pod *corev1.Pod) (string, bool) {
	var ready, containers bool
	conds := map[corev1.PodConditionType]corev1.ConditionStatus{}
	for _, c := range pod.Status.Conditions {
		conds[c.Type] = c.Status
		switch c.Type {
		case corev1.PodReady:
			ready = c.Status == corev1.ConditionTrue
		case corev1.ContainersReady:
			containers = c.Status == corev1.ConditionTrue
		}
	}
	if !ready || !containers || !HasGate(pod) {
		return "", false
	}
	conds[ReadinessGate] = corev1.ConditionFalse
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		s, found := conds[g.ConditionType]
		switch {
		case !found:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(g.ConditionType)))
		case s != corev1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(g.ConditionType), s))
		}
	}
	return strings.Join(msgs, ", "), true
}
