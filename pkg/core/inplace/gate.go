package inplace

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/pkg/core/settle"
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

// Reasons written on the inplace.dev/ready condition.
const (
	// GateReasonStart: patch-pod set it False before the patch.
	GateReasonStart = "StartInPlaceUpdate"
	// GateReasonDone: verify set it True when the upgrade ended.
	GateReasonDone = "InPlaceUpdateDone"
	// GateReasonIdle: the pod watcher set it True on a pod with no upgrade
	// in flight (a new pod of an opted-in workload).
	GateReasonIdle = "NoUpgradeInFlight"
)

// GateStartMessage begins the message of the gate patch-pod sets False
// for an upgrade: which upgrade holds the pod out of service.
func GateStartMessage(upgradeID, target string) string {
	return fmt.Sprintf("in-place upgrade %s to %s", upgradeID, target)
}

// GateHeldFor reports whether the pod's gate is False as patch-pod set it
// for upgradeID (GateReasonStart, GateStartMessage): nothing but that
// upgrade's end opens it again.
func GateHeldFor(pod *corev1.Pod, upgradeID string) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == ReadinessGate {
			return c.Status == corev1.ConditionFalse && c.Reason == GateReasonStart &&
				strings.HasPrefix(c.Message, "in-place upgrade "+upgradeID+" ")
		}
	}
	return false
}

// InitGatePatch is the JSON patch for the status subresource that gives a
// pod declaring the gate, but not yet carrying its condition, the condition
// True: without it the pod never becomes Ready. It tests the UID and
// resourceVersion, so it cannot overwrite a False that patch-pod wrote
// meanwhile. It returns ErrAlreadyApplied when the condition exists, and a
// permanent error when the pod does not declare the gate or has an upgrade
// in flight (its condition is patch-pod's and verify's to set).
func InitGatePatch(pod *corev1.Pod, now time.Time) ([]byte, error) {
	if !HasGate(pod) {
		return nil, settle.Permanentf("init gate on pod %s/%s: it does not declare %s", pod.Namespace, pod.Name, ReadinessGate)
	}
	if _, ok := GateStatus(pod); ok {
		return nil, fmt.Errorf("init gate on pod %s/%s: %w", pod.Namespace, pod.Name, ErrAlreadyApplied)
	}
	st, err := ParseState(pod)
	if err != nil {
		return nil, err
	}
	if st != nil && st.Phase.Active() {
		return nil, settle.Permanentf("init gate on pod %s/%s: upgrade %s is %s", pod.Namespace, pod.Name, st.UpgradeID, st.Phase)
	}
	cond := corev1.PodCondition{Type: ReadinessGate, Status: corev1.ConditionTrue, Reason: GateReasonIdle,
		Message: "no in-place upgrade in flight", LastTransitionTime: metav1.NewTime(now.UTC())}
	ops := []op{testOp("/metadata/uid", string(pod.UID)), testOp("/metadata/resourceVersion", pod.ResourceVersion)}
	if pod.Status.Conditions == nil {
		ops = append(ops, addOp("/status/conditions", []corev1.PodCondition{cond}))
	} else {
		ops = append(ops, addOp("/status/conditions/-", cond))
	}
	return marshal(ops)
}
