package prepull

import (
	"slices"
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
	p := podFor("inplace-system", slotName("node-1", 0), "node-1", "amd64", []string{"r/a:1", "r/b:1"}, time.Now())
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

// A pre-pull container runs nothing of the image it pulls: an image with
// no shell and no /bin/true (distroless, scratch, a static binary) starts
// as well as any, so its pull ends without a failed start. It runs the
// exit program of its node's architecture from a read-only ConfigMap
// volume; only on an architecture with no exit program does it run
// /bin/true.
func TestAPrepullPodRunsNoCommandOfItsImage(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			p := podFor("pulls", slotName("node-1", 0), "node-1", arch, []string{"r/a:1", "r/b:1"}, time.Now())
			wantVolumes := []corev1.Volume{{Name: exitVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: exitConfigMap("pulls").Name},
				Items:                []corev1.KeyToPath{{Key: "exit-" + arch, Path: "exit"}},
				DefaultMode:          new(int32(0o555)),
			}}}}
			if diff := cmp.Diff(wantVolumes, p.Spec.Volumes); diff != "" {
				t.Errorf("volumes (-want +got):\n%s", diff)
			}
			for _, c := range p.Spec.Containers {
				if diff := cmp.Diff([]string{"/inplace-prepull/exit"}, c.Command); diff != "" {
					t.Errorf("container %s command (-want +got):\n%s", c.Name, diff)
				}
				want := []corev1.VolumeMount{{Name: exitVolume, MountPath: "/inplace-prepull", ReadOnly: true}}
				if diff := cmp.Diff(want, c.VolumeMounts); diff != "" {
					t.Errorf("container %s mounts (-want +got):\n%s", c.Name, diff)
				}
			}
			if _, ok := exitConfigMap("pulls").BinaryData[p.Spec.Volumes[0].ConfigMap.Items[0].Key]; !ok {
				t.Errorf("the ConfigMap has no key %s", p.Spec.Volumes[0].ConfigMap.Items[0].Key)
			}
		})
	}
	t.Run("unknown architecture", func(t *testing.T) {
		p := podFor("pulls", slotName("node-1", 0), "node-1", "s390x", []string{"r/a:1"}, time.Now())
		if c := p.Spec.Containers[0]; len(p.Spec.Volumes) != 0 || len(c.VolumeMounts) != 0 || !slices.Equal(c.Command, []string{"/bin/true"}) {
			t.Errorf("command %v, mounts %v, volumes %v; want /bin/true and no volume", c.Command, c.VolumeMounts, p.Spec.Volumes)
		}
	})
}
