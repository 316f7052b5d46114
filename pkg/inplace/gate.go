package inplace

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// HasGate reports whether the pod declares the inplace.dev/ready readiness
// gate. A gate cannot be added to a running pod; only pods created from a
// template that declares it have one.
func HasGate(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == ReadinessGate {
			return true
		}
	}
	return false
}

// GateStatus is the status of the inplace.dev/ready condition, and whether
// the pod has that condition at all.
func GateStatus(pod *corev1.Pod) (corev1.ConditionStatus, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == ReadinessGate {
			return c.Status, true
		}
	}
	return "", false
}

// GatePatch is a strategic-merge patch for the pod's status subresource that
// sets only the inplace.dev/ready condition (conditions merge by type; a JSON
// merge patch would replace the whole list, so never send it as one). With a
// uid, the patch also carries metadata.uid, which the API server refuses to
// change: a replaced pod of the same name rejects it.
func GatePatch(uid types.UID, status corev1.ConditionStatus, reason, message string, now time.Time) []byte {
	type condition struct {
		Type               corev1.PodConditionType `json:"type"`
		Status             corev1.ConditionStatus  `json:"status"`
		Reason             string                  `json:"reason,omitempty"`
		Message            string                  `json:"message,omitempty"`
		LastTransitionTime metav1.Time             `json:"lastTransitionTime"`
	}
	body := map[string]any{"status": map[string]any{"conditions": []condition{{
		Type: ReadinessGate, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now.UTC()),
	}}}}
	if uid != "" {
		body["metadata"] = map[string]any{"uid": uid}
	}
	b, err := json.Marshal(body)
	if err != nil { // strings and a time only: cannot happen
		panic("inplace: encode gate patch: " + err.Error())
	}
	return b
}
