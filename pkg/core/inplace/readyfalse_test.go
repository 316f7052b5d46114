package inplace

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The gate-False patch carries Ready False with the kubelet's own reason
// and message (pkg/kubelet/status GeneratePodReadyCondition, v1.35) while
// the pod is Ready with ready containers, so the kubelet finds nothing to
// reconcile; otherwise the gate alone, as GatePatch writes it.
func TestGateFalseReadyPatch(t *testing.T) {
	now := time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC)
	pod := func(ready, containers corev1.ConditionStatus, gates ...corev1.PodConditionType) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1"}}
		for _, g := range gates {
			p.Spec.ReadinessGates = append(p.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: g})
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: g, Status: corev1.ConditionTrue})
		}
		p.Status.Conditions = append(p.Status.Conditions,
			corev1.PodCondition{Type: corev1.PodReady, Status: ready},
			corev1.PodCondition{Type: corev1.ContainersReady, Status: containers})
		return p
	}
	const ours = `the status of pod readiness gate "inplace.dev/ready" is not "True", but False`
	tests := []struct {
		name    string
		pod     *corev1.Pod
		ok      bool
		message string
	}{
		{"Ready, our gate alone", pod(corev1.ConditionTrue, corev1.ConditionTrue, ReadinessGate), true, ours},
		{"Ready, another gate True beside ours", pod(corev1.ConditionTrue, corev1.ConditionTrue, "example.com/lb", ReadinessGate), true, ours},
		{"Ready False already", pod(corev1.ConditionFalse, corev1.ConditionTrue, ReadinessGate), false, ""},
		{"containers not ready", pod(corev1.ConditionTrue, corev1.ConditionFalse, ReadinessGate), false, ""},
		{"no gate of ours", pod(corev1.ConditionTrue, corev1.ConditionTrue, "example.com/lb"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := GateFalseReadyPatch(tt.pod, GateReasonStart, "m", now)
			if ok != tt.ok {
				t.Fatalf("ok %v; want %v", ok, tt.ok)
			}
			var got struct {
				Metadata struct{ UID string } `json:"metadata"`
				Status   struct {
					Conditions []corev1.PodCondition `json:"conditions"`
				} `json:"status"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Metadata.UID != "u1" {
				t.Errorf("uid %q; want the pod's, u1", got.Metadata.UID)
			}
			want := 1
			if tt.ok {
				want = 2
			}
			if len(got.Status.Conditions) != want {
				t.Fatalf("conditions %+v; want %d", got.Status.Conditions, want)
			}
			g := got.Status.Conditions[0]
			if g.Type != ReadinessGate || g.Status != corev1.ConditionFalse || g.Reason != GateReasonStart || g.Message != "m" {
				t.Errorf("gate %+v; want False, %s, m", g, GateReasonStart)
			}
			if !tt.ok {
				return
			}
			r := got.Status.Conditions[1]
			if r.Type != corev1.PodReady || r.Status != corev1.ConditionFalse || r.Reason != "ReadinessGatesNotReady" || r.Message != tt.message {
				t.Errorf("Ready %+v; want False, ReadinessGatesNotReady, %q", r, tt.message)
			}
		})
	}
}
