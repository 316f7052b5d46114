package prepull

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A pre-pull pod sets no CPU limit on any container, so its pod cgroup
// gets no CFS quota: the runtime's own start of its sandbox and
// containers (runc init, in that cgroup) runs unthrottled. With a 10m
// limit a real node took 5.0 s to start the sandbox of a pre-pull pod of
// an image it had, and the kubelet's Pulled Event came only after it.
// Requests and the memory limit stay.
func TestAPrepullPodHasNoCPULimit(t *testing.T) {
	p := podFor("inplace-system", slotName("node-1", 0), "node-1", []string{"r/a:1", "r/b:1"}, time.Now())
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("8Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")},
	}
	if len(p.Spec.Containers) != 2 {
		t.Fatalf("%d containers, want 2", len(p.Spec.Containers))
	}
	for _, c := range p.Spec.Containers {
		if diff := cmp.Diff(want, c.Resources); diff != "" {
			t.Errorf("container %s resources (-want +got):\n%s", c.Name, diff)
		}
	}
}
