package world_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// TestCrashingImage: an image marked to crash starts, exits with an error
// and restarts with back-off: CrashLoopBackOff, restartCount rising, a
// BackOff warning.
func TestCrashingImage(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	skipOnReal(t, w)
	if _, err := w.Registry.Push(t.Context(), "inplace/crash", "v1", registry.WithCrash()); err != nil {
		t.Fatalf("push: %v", err)
	}
	pod := simplePod(ns, "crash", w.Registry.Host()+"/inplace/crash:v1")
	if _, err := w.Client().CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	p, err := world.WaitPod(t.Context(), w.Client(), ns, "crash", podTimeout, "CrashLoopBackOff after 2 restarts", func(p *corev1.Pod) bool {
		s := world.ContainerStatus(p, "app")
		return s != nil && s.RestartCount >= 2 && waitingReason(p, "app") == "CrashLoopBackOff"
	})
	if err != nil {
		t.Fatal(err)
	}
	if lt := world.ContainerStatus(p, "app").LastTerminationState.Terminated; lt == nil || lt.ExitCode == 0 {
		t.Errorf("lastState = %+v, want terminated with a non-zero exit code", lt)
	}
	if world.PodReady(p) || p.Status.Phase != corev1.PodRunning {
		t.Errorf("ready %v phase %s, want not Ready, Running", world.PodReady(p), p.Status.Phase)
	}
	e := waitEvent(t, w, p, "BackOff", "Back-off restarting failed container app")
	if e.Type != corev1.EventTypeWarning {
		t.Errorf("BackOff event type %s, want Warning", e.Type)
	}
}

// TestPodRunsToCompletion: a restartPolicy Never pod (what a pre-pull pod
// is) runs its container to exit 0 and ends Succeeded.
func TestPodRunsToCompletion(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	image, imageID := push(t, w, "inplace/job", "v1")
	pod := simplePod(ns, "once", image)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := w.Client().CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	p, err := world.WaitPod(t.Context(), w.Client(), ns, "once", podTimeout, "Succeeded", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded
	})
	if err != nil {
		t.Fatal(err)
	}
	s := world.ContainerStatus(p, "app")
	if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 || s.State.Terminated.Reason != "Completed" || s.ImageID != imageID {
		t.Errorf("container status %+v, want terminated Completed (0) with imageID %s", s, imageID)
	}
}

// TestScaleDownDeletesPods: graceful deletion is finished by the kubelet
// (containers stopped, pod deleted), so a ReplicaSet can scale down.
func TestScaleDownDeletesPods(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	image, _ := push(t, w, "inplace/scale", "v1")
	if _, err := w.Client().AppsV1().Deployments(ns).Create(ctx, deployment("scale", ns, image, 4), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := world.WaitPods(ctx, w.Client(), ns, "app=scale", podTimeout, "4 Ready", world.AllReady(4)); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"replicas":1}}`)
	if _, err := w.Client().AppsV1().Deployments(ns).Patch(ctx, "scale", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("scale: %v", err)
	}
	_, err := world.WaitPods(ctx, w.Client(), ns, "app=scale", podTimeout, "1 pod left", world.AllReady(1))
	if err != nil {
		t.Fatal(err)
	}
	err = world.Eventually(ctx, podTimeout, "a Killing event per deleted pod", func(ctx context.Context) (bool, error) {
		evs, err := w.Client().CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Killing"})
		return err == nil && len(evs.Items) >= 3, err
	})
	if err != nil {
		t.Error(err)
	}
}

// TestNodesStayHealthy: with Lease renewals and status heartbeats the
// node-lifecycle controller (grace shortened to 15s in TestMain) never
// marks a node NotReady or taints it.
func TestNodesStayHealthy(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	deadline := time.Now().Add(18 * time.Second)
	for time.Now().Before(deadline) {
		for _, name := range w.NodeNames() {
			n, err := w.Client().CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get node: %v", err)
			}
			if len(n.Spec.Taints) > 0 || !nodeReady(n) {
				t.Fatalf("node %s: taints %v ready %v, want healthy", name, n.Spec.Taints, nodeReady(n))
			}
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(time.Second):
		}
	}
	l, err := w.Client().CoordinationV1().Leases("kube-node-lease").Get(t.Context(), w.NodeNames()[0], metav1.GetOptions{})
	if err != nil || l.Spec.RenewTime == nil || time.Since(l.Spec.RenewTime.Time) > 10*time.Second {
		t.Errorf("lease %+v (err %v), want renewed within the last 10s", l, err)
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
