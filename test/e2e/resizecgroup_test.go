package e2e_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/realnode"
)

// A CPU resize reaches the container's cgroup on the node without a
// restart: cpu.shares and the CFS quota (cpu.weight and cpu.max on cgroup
// v2), read on the host under the node's cgroup root, go from 100m/200m to
// 300m/300m while the containerID and restartCount stay.
func TestResizeCPUReachesTheCgroup(t *testing.T) {
	e := newEnv(t)
	requireRealNodes(t, e, "it reads the container's cgroup files, which only a real node's runtime writes")
	e.push("shop", "1.0.0")
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}
	e.createWith("Deployment", "cg", 1, res, e.ref("shop", "1.0.0"))
	pod := e.onlyPod("cg")
	before := stateOf(pod)
	if diff := cmp.Diff(realnode.CPUFor(100, 200), e.containerCPU(pod, "app")); diff != "" {
		t.Fatalf("cgroup before the resize (-want +got):\n%s", diff)
	}

	e.requestResize("Deployment", "cg", "300m", "app")
	if ev, r := e.waitResizeResult("cg", 2*time.Minute); ev.Type() != events.ContainerResizeSucceeded || r.Counts.Succeeded != 1 {
		t.Fatalf("result %s %+v; want succeeded, 1 pod", ev.Type(), r)
	}
	pod = e.onlyPod("cg")
	after := stateOf(pod)
	if a, b := after.Containers["app"], before.Containers["app"]; a.ID != b.ID || a.Restarts != b.Restarts || after.UID != before.UID {
		t.Errorf("pod %s restarted or replaced: %+v → %+v", pod.Name, before, after)
	}
	// The request exceeded the limit, so the limit follows it.
	if diff := cmp.Diff(realnode.CPUFor(300, 300), e.containerCPU(pod, "app")); diff != "" {
		t.Errorf("cgroup after the resize (-want +got):\n%s", diff)
	}
}

// containerCPU reads the CPU settings of a container's cgroup on its node.
func (e *env) containerCPU(pod *corev1.Pod, container string) realnode.CPU {
	e.t.Helper()
	c, err := e.w.Real.ContainerCPU(pod.Spec.NodeName, string(pod.UID), stateOf(pod).Containers[container].ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}
