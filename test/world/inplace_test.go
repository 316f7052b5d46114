package world_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/world"
)

// TestInPlaceImageChange: patching a running pod's image to a pushed tag
// restarts just that container: restartCount 1, the registry's digest as
// imageID, a new containerID, the old one as lastState; same UID, IP, node.
func TestInPlaceImageChange(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	v1, id1 := push(t, w, "inplace/app", "v1")
	v2, id2 := push(t, w, "inplace/app", "v2")
	before := runPod(t, w, simplePod(ns, "app", v1))
	old := world.ContainerStatus(before, "app")
	if old.ImageID != id1 || old.RestartCount != 0 || !strings.HasPrefix(old.ContainerID, "containerd://") {
		t.Fatalf("before: imageID %q restartCount %d containerID %q, want %q, 0, containerd://…", old.ImageID, old.RestartCount, old.ContainerID, id1)
	}
	if before.Status.ObservedGeneration != before.Generation {
		t.Errorf("before: observedGeneration %d, want %d", before.Status.ObservedGeneration, before.Generation)
	}

	patchImage(t, w, ns, "app", "app", v2)
	after, err := world.WaitPod(t.Context(), w.Client(), ns, "app", podTimeout, "restarted on v2 and Ready", func(p *corev1.Pod) bool {
		s := world.ContainerStatus(p, "app")
		return s != nil && s.RestartCount == 1 && s.ImageID == id2 && world.PodReady(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	cs := world.ContainerStatus(after, "app")
	checks := []struct {
		name      string
		got, want any
	}{
		{"uid", after.UID, before.UID},
		{"podIP", after.Status.PodIP, before.Status.PodIP},
		{"node", after.Spec.NodeName, before.Spec.NodeName},
		{"status image", cs.Image, v2},
		{"lastState containerID", terminatedID(cs.LastTerminationState), old.ContainerID},
		{"observedGeneration", after.Status.ObservedGeneration, after.Generation},
		{"phase", after.Status.Phase, corev1.PodRunning},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if cs.ContainerID == old.ContainerID || !strings.HasPrefix(cs.ContainerID, "containerd://") {
		t.Errorf("containerID = %q, want a new containerd:// id (old %q)", cs.ContainerID, old.ContainerID)
	}
	if after.Generation != before.Generation+1 {
		t.Errorf("generation = %d, want %d", after.Generation, before.Generation+1)
	}
	for _, reason := range []string{"Killing", "Pulling", "Pulled", "Created", "Started"} {
		e := waitEvent(t, w, after, reason, "")
		if e.Source.Component != "kubelet" || e.Source.Host != after.Spec.NodeName {
			t.Errorf("%s event source = %+v, want kubelet on %s", reason, e.Source, after.Spec.NodeName)
		}
	}
	waitEvent(t, w, after, "Killing", "Container app definition changed, will be restarted")
}

// TestInPlaceMissingImage: patching to a tag the registry does not have
// ends in ImagePullBackOff: NotReady, phase Running, restartCount and
// status image/imageID unchanged; pushing the tag later recovers the pod.
func TestInPlaceMissingImage(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	v1, id1 := push(t, w, "inplace/missing", "v1")
	runPod(t, w, simplePod(ns, "app", v1))
	missing := w.Registry.Host() + "/inplace/missing:v404"

	patchImage(t, w, ns, "app", "app", missing)
	p, err := world.WaitPod(t.Context(), w.Client(), ns, "app", podTimeout, "ImagePullBackOff", func(p *corev1.Pod) bool {
		return waitingReason(p, "app") == "ImagePullBackOff"
	})
	if err != nil {
		t.Fatal(err)
	}
	cs := world.ContainerStatus(p, "app")
	if world.PodReady(p) || p.Status.Phase != corev1.PodRunning {
		t.Errorf("ready %v phase %s, want not ready and Running\n%s", world.PodReady(p), p.Status.Phase, dump(p))
	}
	if cs.RestartCount != 0 || cs.ImageID != id1 || cs.Image != v1 || cs.LastTerminationState.Terminated == nil {
		t.Errorf("status restartCount %d image %q imageID %q lastState %+v, want 0, %q, %q, terminated",
			cs.RestartCount, cs.Image, cs.ImageID, cs.LastTerminationState, v1, id1)
	}
	e := waitEvent(t, w, p, "Failed", "Failed to pull image")
	if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Message, "not found") {
		t.Errorf("Failed event %s %q, want Warning mentioning not found", e.Type, e.Message)
	}

	_, id404 := push(t, w, "inplace/missing", "v404")
	_, err = world.WaitPod(t.Context(), w.Client(), ns, "app", podTimeout, "recovered on v404", func(p *corev1.Pod) bool {
		s := world.ContainerStatus(p, "app")
		return s != nil && s.ImageID == id404 && s.RestartCount == 1 && world.PodReady(p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPodUpdateOtherFieldsRejected: the real API server refuses any pod
// spec change but images (422 Invalid).
func TestPodUpdateOtherFieldsRejected(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	v1, _ := push(t, w, "inplace/immutable", "v1")
	p := runPod(t, w, simplePod(ns, "app", v1))
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}}
	_, err := w.Client().CoreV1().Pods(ns).Update(t.Context(), p, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "pod updates may not change fields") {
		t.Fatalf("update env: err = %v, want 422 Invalid with \"pod updates may not change fields\"", err)
	}
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != 422 {
		t.Errorf("update env: status %v, want code 422", err)
	}
}

func terminatedID(s corev1.ContainerState) string {
	if s.Terminated == nil {
		return ""
	}
	return s.Terminated.ContainerID
}
