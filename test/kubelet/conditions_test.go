package kubelet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestReadinessGates(t *testing.T) {
	const gate = "inplace.dev/ready"
	ready := []corev1.ContainerStatus{{Name: "app", Ready: true}}
	tests := []struct {
		name       string
		gates      []corev1.PodReadinessGate
		statuses   []corev1.ContainerStatus
		conds      []corev1.PodCondition
		wantStatus corev1.ConditionStatus
		wantReason string
	}{
		{"no gate, container ready", nil, ready, nil, corev1.ConditionTrue, ""},
		{"container not ready", nil, []corev1.ContainerStatus{{Name: "app"}}, nil, corev1.ConditionFalse, "ContainersNotReady"},
		{"gate missing", []corev1.PodReadinessGate{{ConditionType: gate}}, ready, nil, corev1.ConditionFalse, "ReadinessGatesNotReady"},
		{"gate False", []corev1.PodReadinessGate{{ConditionType: gate}}, ready,
			[]corev1.PodCondition{{Type: gate, Status: corev1.ConditionFalse}}, corev1.ConditionFalse, "ReadinessGatesNotReady"},
		{"gate True", []corev1.PodReadinessGate{{ConditionType: gate}}, ready,
			[]corev1.PodCondition{{Type: gate, Status: corev1.ConditionTrue}}, corev1.ConditionTrue, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(ctrSpec("app", imgV1))
			pod.Spec.ReadinessGates = tc.gates
			st := corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: tc.statuses, Conditions: tc.conds}
			pod.Status = st
			got := findCondition(kubeletConditions(pod, st, true, nil, t0), corev1.PodReady)
			if got.Status != tc.wantStatus || got.Reason != tc.wantReason {
				t.Errorf("Ready = %s/%s (%s), want %s/%s", got.Status, got.Reason, got.Message, tc.wantStatus, tc.wantReason)
			}
		})
	}
}

// TestConditionsKeepOthers: conditions the kubelet does not own are kept
// untouched, and a kubelet condition keeps its transition time while its
// status stays.
func TestConditionsKeepOthers(t *testing.T) {
	pod := testPod(ctrSpec("app", imgV1))
	pod.Generation = 3
	earlier := apiTime(t0.Add(-time.Hour))
	others := []corev1.PodCondition{
		{Type: "example.com/custom", Status: corev1.ConditionFalse, Reason: "Mine", LastTransitionTime: earlier},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, LastTransitionTime: earlier},
	}
	st := corev1.PodStatus{
		Phase:             corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		Conditions:        append(others, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: earlier}),
	}
	pod.Status = st
	got := kubeletConditions(pod, st, true, nil, t0)
	if diff := cmp.Diff(others, got[:2]); diff != "" {
		t.Errorf("other conditions changed (-want +got):\n%s", diff)
	}
	var order []corev1.PodConditionType
	for _, c := range got[2:] {
		order = append(order, c.Type)
	}
	wantOrder := []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("kubelet's conditions (-want +got):\n%s", diff)
	}
	if c := findCondition(got, corev1.PodReady); c.LastTransitionTime != earlier || c.ObservedGeneration != 3 {
		t.Errorf("Ready = %+v, want transition time kept and observedGeneration 3", c)
	}
	if c := findCondition(got, corev1.ContainersReady); c.LastTransitionTime != apiTime(t0) {
		t.Errorf("new ContainersReady transition %v, want now", c.LastTransitionTime)
	}
}
