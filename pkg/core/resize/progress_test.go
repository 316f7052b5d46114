package resize

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func running(spec, status corev1.ResourceRequirements, restarts int32, policy corev1.ResourceResizeRestartPolicy, conds ...corev1.PodCondition) *corev1.Pod {
	p := pod(spec)
	p.Spec.Containers[1].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: policy}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Resources: &status, RestartCount: restarts}}
	p.Status.Conditions = conds
	return p
}

func TestJudge(t *testing.T) {
	from, to := rr("100m", ""), rr("500m", "")
	cond := func(typ corev1.PodConditionType, reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: "node says " + reason}
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		state  State
		reason string
	}{
		{"not applied yet", running(to, from, 2, corev1.NotRequired), Waiting, "NotApplied"},
		{"deferred", running(to, from, 2, corev1.NotRequired, cond(corev1.PodResizePending, corev1.PodReasonDeferred)), Waiting, corev1.PodReasonDeferred},
		{"in progress", running(to, to, 2, corev1.NotRequired, cond(corev1.PodResizeInProgress, "")), Waiting, "InProgress"},
		{"infeasible", running(to, from, 2, corev1.NotRequired, cond(corev1.PodResizePending, corev1.PodReasonInfeasible)), Failed, corev1.PodReasonInfeasible},
		{"error", running(to, from, 2, corev1.NotRequired, cond(corev1.PodResizeInProgress, corev1.PodReasonError)), Failed, "ResizeError"},
		{"done without a restart", running(to, to, 2, corev1.NotRequired), Done, "Resized"},
		{"restarted though NotRequired", running(to, to, 3, corev1.NotRequired), Failed, "ContainerRestarted"},
		{"RestartContainer not restarted yet", running(to, to, 2, corev1.RestartContainer), Waiting, "NotRestarted"},
		{"RestartContainer restarted once", running(to, to, 3, corev1.RestartContainer), Done, "Resized"},
		{"changed by someone else", running(rr("300m", ""), from, 2, corev1.NotRequired), Failed, "ResourcesChanged"},
	}
	for _, tt := range tests {
		got := Judge(tt.pod, "app", from, to, 2)
		if got.State != tt.state || got.Reason != tt.reason {
			t.Errorf("%s: Judge = %+v, want state %d reason %s", tt.name, got, tt.state, tt.reason)
		}
	}
	if got := Judge(pod(to), "gone", from, to, 0); got.State != Failed {
		t.Errorf("container gone: %+v", got)
	}
	p := running(to, from, 2, corev1.NotRequired, cond(corev1.PodResizePending, corev1.PodReasonInfeasible))
	if got := Judge(p, "app", from, to, 2); got.Message != "node says Infeasible" {
		t.Errorf("the kubelet's message is not kept: %q", got.Message)
	}
}
