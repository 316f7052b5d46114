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
