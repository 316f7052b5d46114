package inplace

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func TestHasGate(t *testing.T) {
	pod := webPod()
	if !HasGate(pod) {
		t.Error("HasGate = false for a pod declaring the gate")
	}
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/other"}}
	if HasGate(pod) {
		t.Error("HasGate = true for a pod with another gate only")
	}
}

func TestGateStatus(t *testing.T) {
	tests := []struct {
		name       string
		conditions []corev1.PodCondition
		want       corev1.ConditionStatus
		wantOK     bool
	}{
		{"absent", []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}, "", false},
		{"false", []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}, {Type: ReadinessGate, Status: corev1.ConditionFalse}}, corev1.ConditionFalse, true},
		{"true", []corev1.PodCondition{{Type: ReadinessGate, Status: corev1.ConditionTrue}}, corev1.ConditionTrue, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := webPod()
			pod.Status.Conditions = tt.conditions
			got, ok := GateStatus(pod)
			if diff := cmp.Diff([]any{tt.want, tt.wantOK}, []any{got, ok}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGatePatch(t *testing.T) {
	got := GatePatch("uid-1", corev1.ConditionFalse, "StartInPlaceUpdate", "upgrading to nginx:1.25.1", t0)
	want := `{"metadata":{"uid":"uid-1"},"status":{"conditions":[{"type":"inplace.dev/ready","status":"False",` +
		`"reason":"StartInPlaceUpdate","message":"upgrading to nginx:1.25.1","lastTransitionTime":"2026-07-01T12:00:00Z"}]}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	noUID := GatePatch("", corev1.ConditionTrue, "", "", t0)
	if diff := cmp.Diff(`{"status":{"conditions":[{"type":"inplace.dev/ready","status":"True","lastTransitionTime":"2026-07-01T12:00:00Z"}]}}`, string(noUID)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGatePatchMerges applies the patch as a strategic merge, as the API
// server does: other conditions stay, ours is replaced by type.
func TestGatePatchMerges(t *testing.T) {
	pod := webPod()
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: ReadinessGate, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
	}
	doc, _ := json.Marshal(pod)
	out, err := strategicpatch.StrategicMergePatch(doc, GatePatch("uid-1", corev1.ConditionFalse, "StartInPlaceUpdate", "", t0), corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: ReadinessGate, Status: corev1.ConditionFalse, Reason: "StartInPlaceUpdate", LastTransitionTime: metav1.NewTime(t0)},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
	}
	if diff := cmp.Diff(want, got.Status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if got.UID != "uid-1" {
		t.Errorf("uid = %q", got.UID)
	}
}
