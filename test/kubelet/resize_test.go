package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// An in-place resize (pods/resize): with resizePolicy NotRequired the
// container keeps running and the status shows the new resources; with
// RestartContainer it is restarted (restartCount+1) with them.
func TestResize(t *testing.T) {
	for _, tc := range []struct {
		policy       corev1.ResourceResizeRestartPolicy
		wantRestarts int32
	}{{corev1.NotRequired, 0}, {corev1.RestartContainer, 1}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			c := ctrSpec("app", imgV1)
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
			c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: tc.policy}}
			s := newSim(t, registry(), testPod(c))
			st := s.until("ready", time.Minute, ready)
			id := statusOfName(st, "app").ContainerID
			s.pod = s.pod.DeepCopy()
			s.pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("500m")
			s.w.poke()
			st = s.until("resized", time.Minute, func(st corev1.PodStatus) bool {
				cs := statusOfName(st, "app")
				return ready(st) && cs.Resources != nil && cs.Resources.Requests.Cpu().String() == "500m" &&
					cs.RestartCount == tc.wantRestarts
			})
			cs := statusOfName(st, "app")
			if cs.RestartCount != tc.wantRestarts || (tc.wantRestarts == 0) != (cs.ContainerID == id) {
				t.Errorf("restartCount %d, containerID kept %v; want %d restarts", cs.RestartCount, cs.ContainerID == id, tc.wantRestarts)
			}
		})
	}
}

// A resize asking more CPU than the node's allocatable is Infeasible, as
// the kubelet says it: PodResizePending with reason Infeasible and its
// message, the container running on with the resources it had (same
// containerID, no restart, the status's resources unchanged). Asking the
// old resources again clears the condition.
func TestResizeInfeasible(t *testing.T) {
	c := ctrSpec("app", imgV1)
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
	s := newSim(t, registry(), testPod(c))
	s.h.alloc = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	st := s.until("ready", time.Minute, ready)
	id := statusOfName(st, "app").ContainerID
	resizeTo := func(cpu string) {
		s.pod = s.pod.DeepCopy()
		s.pod.Generation++
		s.pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
		s.w.poke()
	}
	resizeTo("3")
	st = s.until("infeasible", time.Minute, func(st corev1.PodStatus) bool {
		return findCondition(st.Conditions, corev1.PodResizePending) != nil
	})
	cond := findCondition(st.Conditions, corev1.PodResizePending)
	if cond.Status != corev1.ConditionTrue || cond.Reason != corev1.PodReasonInfeasible ||
		cond.Message != "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000" {
		t.Errorf("PodResizePending = %+v", cond)
	}
	cs := statusOfName(st, "app")
	if cs.ContainerID != id || cs.RestartCount != 0 || cs.Resources == nil || cs.Resources.Requests.Cpu().String() != "250m" {
		t.Errorf("an infeasible resize touched the container: id kept %v, restarts %d, resources %v", cs.ContainerID == id, cs.RestartCount, cs.Resources)
	}
	resizeTo("250m")
	st = s.until("pending cleared", time.Minute, func(st corev1.PodStatus) bool {
		return findCondition(st.Conditions, corev1.PodResizePending) == nil
	})
	if cs := statusOfName(st, "app"); cs.ContainerID != id || cs.RestartCount != 0 {
		t.Errorf("going back restarted the container: id kept %v, restarts %d", cs.ContainerID == id, cs.RestartCount)
	}
}
