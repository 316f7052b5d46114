package verify

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

func cpuAsks(q string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
}

// resizedPod is a pod whose app container's spec asks spec and whose
// status reports status, with restarts and the given conditions.
func resizedPod(spec, status string, restarts int32, conds ...corev1.PodCondition) *corev1.Pod {
	sr := cpuAsks(status)
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: cpuAsks(spec)}}}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Resources: &sr, RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	p.Status.Conditions = conds
	return p
}

// TestResizeDecide: how verify reads a resize from the watch and what it
// does next, going forward and back.
func TestResizeDecide(t *testing.T) {
	l := limits{verify: time.Minute}
	res := &events.ResizeResources{From: cpuAsks("100m"), To: cpuAsks("500m")}
	patched := &inplace.State{UpgradeID: "z", Phase: inplace.PhasePatched, PatchedAt: t0, Resize: &events.ResizePlan{RequestID: "z"},
		Containers: []inplace.ContainerState{{Name: "app", PreviousRestartCount: 2, Resources: res}}}
	back := *patched
	back.Phase, back.RollbackAt, back.Reason = inplace.PhaseRollingBack, t0.Add(time.Minute), corev1.PodReasonInfeasible
	back.Containers = []inplace.ContainerState{{Name: "app", PreviousRestartCount: 2, RollbackRestartCount: 2, Resources: res}}
	infeasible := corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible, Message: "Node didn't have enough capacity: cpu"}
	tests := []struct {
		name   string
		st     *inplace.State
		pod    *corev1.Pod
		now    time.Time
		act    action
		reason string
	}{
		{"state written, resize not sent yet", patched, resizedPod("100m", "100m", 2), t0, wait, ""},
		{"sent, the kubelet not there yet", patched, resizedPod("500m", "100m", 2), t0, wait, ""},
		{"resized without a restart", patched, resizedPod("500m", "500m", 2), t0, succeed, inplace.ReasonResized},
		{"restarted though NotRequired", patched, resizedPod("500m", "500m", 3), t0, rollback, "ContainerRestarted"},
		{"infeasible", patched, resizedPod("500m", "100m", 2, infeasible), t0, rollback, corev1.PodReasonInfeasible},
		{"not resized by the deadline", patched, resizedPod("500m", "100m", 2), t0.Add(2 * time.Minute), rollback, ReasonDeadline},
		{"changed by someone else", patched, resizedPod("300m", "100m", 2), t0, fail, inplace.ReasonChangedByOthers},
		{"back: not sent back yet", &back, resizedPod("500m", "100m", 2, infeasible), t0.Add(time.Minute), rollback, corev1.PodReasonInfeasible},
		{"back: stale Infeasible waits", &back, resizedPod("100m", "100m", 2, infeasible), t0.Add(time.Minute), wait, ""},
		{"back: done", &back, resizedPod("100m", "100m", 2), t0.Add(time.Minute), rolledBack, corev1.PodReasonInfeasible},
		{"back: not done by its deadline", &back, resizedPod("100m", "100m", 2, infeasible), t0.Add(3 * time.Minute), fail, ReasonRollbackTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := inplace.ResizeProgress(tt.pod, tt.st)
			d := resizeDecision(tt.pod, tt.st, r, decide(tt.pod, tt.st, r, tt.now, l))
			if d.act != tt.act || d.reason != tt.reason {
				t.Errorf("decision %+v (progress %+v); want act %d reason %q", d, r, tt.act, tt.reason)
			}
		})
	}
}
