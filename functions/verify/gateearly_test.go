package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// The gate opens as soon as the kubelet has taken the patch up (it
// observed the patched generation, or, where it does not report that, it
// replaced the container), before the new container is ready, and only
// then: not for a gate another upgrade holds, not during a rollback, and
// never in place of another decision.
func TestGateEarly(t *testing.T) {
	const target = "r.test/app:2@sha256:new"
	plan := events.Plan{UpgradeID: "u", Containers: []events.ContainerPlan{{Name: "app", ToImage: target, ToDigest: "sha256:new"}}}
	st := &inplace.State{UpgradeID: "u", Phase: inplace.PhasePatched, PatchedAt: t0,
		Containers: []inplace.ContainerState{{Name: "app", PreviousContainerID: "containerd://c1", PreviousImageID: "r.test/app@sha256:old"}}}
	rolling := *st
	rolling.Phase = inplace.PhaseRollingBack
	held := corev1.PodCondition{Type: inplace.ReadinessGate, Status: corev1.ConditionFalse, Reason: inplace.GateReasonStart,
		Message: inplace.GateStartMessage("u", target)}
	pod := func(observed int64, containerID, imageID string, ready bool, gate corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: target}},
				ReadinessGates: []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}},
			Status: corev1.PodStatus{ObservedGeneration: observed, Conditions: []corev1.PodCondition{gate},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: containerID, ImageID: imageID, Ready: ready,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	}
	otherGate := held
	otherGate.Message = inplace.GateStartMessage("u-other", target)
	open := decision{act: openGate, reason: inplace.GateReasonDone,
		message: "in-place upgrade u: the kubelet took the patch up; Ready follows the new containers"}
	waiting := decision{act: wait}
	tests := []struct {
		name string
		pod  *corev1.Pod
		st   *inplace.State
		d    decision
		want decision
	}{
		{"observed, old container stopping", pod(2, "containerd://c1", "r.test/app@sha256:old", true, held), st, waiting, open},
		{"not observed yet", pod(1, "containerd://c1", "r.test/app@sha256:old", true, held), st, waiting, waiting},
		{"not reported, replaced, not ready yet", pod(0, "containerd://c2", "r.test/app@sha256:new", false, held), st, waiting, open},
		{"not reported, old container still runs", pod(0, "containerd://c1", "r.test/app@sha256:old", true, held), st, waiting, waiting},
		{"gate held for another upgrade", pod(2, "containerd://c2", "r.test/app@sha256:new", false, otherGate), st, waiting, waiting},
		{"rolling back", pod(2, "containerd://c2", "r.test/app@sha256:new", false, held), &rolling, waiting, waiting},
		{"another decision stands", pod(2, "containerd://c2", "r.test/app@sha256:new", true, held), st,
			decision{succeed, inplace.ReasonUpdated, "ok"}, decision{succeed, inplace.ReasonUpdated, "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gateEarly(tt.pod, tt.st, plan, tt.d)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(decision{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
