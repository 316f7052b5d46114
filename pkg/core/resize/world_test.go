package resize_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// send writes resize.Patch through the pods/resize subresource, as
// patch-pod's identity (config/rbac lets it).
func send(t *testing.T, c kubernetes.Interface, pod *corev1.Pod, from, to corev1.ResourceRequirements) ([]byte, error) {
	t.Helper()
	b, ok, err := resize.Patch(pod, string(pod.UID), "app", from, to)
	if err != nil || !ok {
		t.Fatalf("resize.Patch: ok %v, %v", ok, err)
	}
	_, err = c.CoreV1().Pods(pod.Namespace).Patch(t.Context(), pod.Name, types.JSONPatchType, b, metav1.PatchOptions{}, "resize")
	return b, err
}

// until polls the pod until Judge says state, and returns the pod.
func until(t *testing.T, w *world.World, pod *corev1.Pod, from, to corev1.ResourceRequirements, restarts int32, state resize.State) (*corev1.Pod, resize.Progress) {
	t.Helper()
	var cur *corev1.Pod
	var p resize.Progress
	err := world.Eventually(t.Context(), fntest.Timeout, "the resize judged", func(ctx context.Context) (bool, error) {
		got, err := w.Client().CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cur, p = got, resize.Judge(got, "app", from, to, restarts)
		return p.State == state, nil
	})
	if err != nil {
		t.Fatalf("%v; last judgement %+v", err, p)
	}
	return cur, p
}

// The resize patch on a real API server and kubelet: a CPU resize under
// resizePolicy NotRequired is judged done once the kubelet runs the
// container with it (same UID, containerID and restartCount); the same
// patch sent again is refused (its test of the resources no longer holds);
// more CPU than the node has is judged Infeasible with the kubelet's
// message, and the patch back to the recorded resources is judged done.
func TestResizeOnTheAPIServer(t *testing.T) {
	w := world.Shared(t)
	if w.Mode == world.NodesHollow {
		t.Skip("hollow nodes: the kubemark fake machine has 0 CPU capacity, so the kubelet answers every CPU resize Infeasible")
	}
	ns := w.NewNamespace(t)
	client := fntest.Identity(t, w, patchpod.RBAC, ns)
	img := fntest.Push(t, w, ns+"/app", "1.0.0")
	p := fntest.Pod(ns, "web", img.Ref, false)
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	p.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}}
	pod := fntest.RunPod(t, w, p)
	before := pod.Status.ContainerStatuses[0]

	from := pod.Spec.Containers[0].Resources
	q := resource.MustParse("500m")
	to := resize.Desired(from, resize.Change{CPU: &q})
	stale, err := send(t, client, pod, from, to)
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	pod, _ = until(t, w, pod, from, to, before.RestartCount, resize.Done)
	after := pod.Status.ContainerStatuses[0]
	if after.ContainerID != before.ContainerID || after.RestartCount != before.RestartCount {
		t.Errorf("the container restarted: %s/%d → %s/%d", before.ContainerID, before.RestartCount, after.ContainerID, after.RestartCount)
	}
	_, err = client.CoreV1().Pods(ns).Patch(t.Context(), pod.Name, types.JSONPatchType, stale, metav1.PatchOptions{}, "resize")
	if !apierrors.IsInvalid(err) {
		t.Errorf("the stale patch (resources changed since): %v, want 422", err)
	}

	huge := resource.MustParse("1000")
	tooMuch := resize.Desired(to, resize.Change{CPU: &huge})
	if _, err := send(t, client, pod, to, tooMuch); err != nil {
		t.Fatalf("resize: %v", err)
	}
	pod, p2 := until(t, w, pod, to, tooMuch, before.RestartCount, resize.Failed)
	if p2.Reason != corev1.PodReasonInfeasible || p2.Message == "" {
		t.Errorf("judged %+v, want Infeasible with the kubelet's message", p2)
	}
	if _, err := send(t, client, pod, tooMuch, to); err != nil {
		t.Fatalf("roll back: %v", err)
	}
	pod, _ = until(t, w, pod, tooMuch, to, before.RestartCount, resize.Done)
	if c := pod.Status.ContainerStatuses[0]; c.ContainerID != before.ContainerID {
		t.Errorf("the rollback restarted the container")
	}
}
