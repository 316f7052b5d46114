package world_test

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/world"
)

// TestMain shares one world; the node-lifecycle controller's grace period is
// shortened so that missing node heartbeats would show within the suite.
func TestMain(m *testing.M) {
	world.Main(m, world.Options{ClusterOptions: cluster.Options{
		ControllerManagerFlags: []string{"--node-monitor-grace-period=15s"},
	}})
}

// TestDeploymentReady: a Deployment created through the real API reaches
// 6/6 Ready pods on the simulated nodes, through a ReplicaSet made by the
// real controller-manager, spread over every node.
func TestDeploymentReady(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	image := pushImage(t, w, "apps/web", "1.0.0")
	dep := deployment("web", ns, image, 6)
	created, err := w.Client().AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	pods, err := world.WaitPods(ctx, w.Client(), ns, "app=web", 2*time.Minute, "6 Ready", world.AllReady(6))
	if err != nil {
		t.Fatal(err)
	}
	rsList, err := w.Client().AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(rsList.Items) != 1 {
		t.Fatalf("replicasets: %v, %d items, want 1", err, len(rsList.Items))
	}
	rs := rsList.Items[0]
	if owner := metav1.GetControllerOf(&rs); owner == nil || owner.UID != created.UID {
		t.Errorf("replicaset %s controller = %v, want deployment %s", rs.Name, owner, created.UID)
	}
	for _, p := range pods {
		if owner := metav1.GetControllerOf(&p); owner == nil || owner.UID != rs.UID {
			t.Errorf("pod %s controller = %v, want replicaset %s", p.Name, owner, rs.Name)
		}
		if !slices.Contains(w.NodeNames(), p.Spec.NodeName) || p.Status.PodIP == "" {
			t.Errorf("pod %s on node %q with IP %q, want a simulated node and an IP", p.Name, p.Spec.NodeName, p.Status.PodIP)
		}
	}
	assertSettled(t, w, ns, pods)
	err = world.Eventually(ctx, time.Minute, "deployment status 6/6 available", func(ctx context.Context) (bool, error) {
		d, err := w.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 6 && d.Status.AvailableReplicas == 6 && d.Status.UpdatedReplicas == 6, err
	})
	if err != nil {
		t.Error(err)
	}
}

func deployment(name, ns, image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
}

// pushImage pushes a fresh image to repo:tag and returns its reference.
func pushImage(t *testing.T, w *world.World, repo, tag string) string {
	t.Helper()
	skipOnReal(t, w)
	if _, err := w.Registry.Push(t.Context(), repo, tag); err != nil {
		t.Fatalf("push %s:%s: %v", repo, tag, err)
	}
	return w.Registry.Host() + "/" + repo + ":" + tag
}

// assertSettled checks that Ready pods are left alone: no status write
// (resourceVersion change) for a few seconds, so the kubelet does not spin
// on its own updates.
func assertSettled(t *testing.T, w *world.World, ns string, pods []corev1.Pod) {
	t.Helper()
	// The sleep is the point: the check is that nothing writes the pods
	// during a window; no event marks the end of a spin that never starts.
	time.Sleep(3 * time.Second)
	for _, p := range pods {
		now, err := w.Client().CoreV1().Pods(ns).Get(t.Context(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", p.Name, err)
		}
		if now.ResourceVersion != p.ResourceVersion {
			t.Errorf("pod %s changed after it was Ready: resourceVersion %s -> %s\n%s", p.Name, p.ResourceVersion, now.ResourceVersion, dump(now))
		}
	}
}
