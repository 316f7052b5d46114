package world_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/world"
)

// TestDaemonSetOnePodPerNode: the real DaemonSet controller places one pod
// per node (pinned with matchFields metadata.name, which the scheduler
// stand-in honours); that needs the node-lifecycle controller to consider
// the simulated nodes Ready and untainted.
func TestDaemonSetOnePodPerNode(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	image, _ := push(t, w, "inplace/agent", "v1")
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: image}}},
			},
		},
	}
	if _, err := w.Client().AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create daemonset: %v", err)
	}
	nodes := w.NodeNames()
	pods, err := world.WaitPods(ctx, w.Client(), ns, "app=agent", 2*time.Minute, "one Ready pod per node", world.AllReady(len(nodes)))
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, p := range pods {
		perNode[p.Spec.NodeName]++
		if !pinnedByMatchFields(&p) {
			t.Errorf("pod %s has no matchFields metadata.name affinity: %+v", p.Name, p.Spec.Affinity)
		}
	}
	for _, n := range nodes {
		if perNode[n] != 1 {
			t.Errorf("node %s has %d agent pods, want 1 (all: %v)", n, perNode[n], perNode)
		}
	}
	err = world.Eventually(ctx, time.Minute, "daemonset status all ready", func(ctx context.Context) (bool, error) {
		d, err := w.Client().AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		return err == nil && d.Status.DesiredNumberScheduled == int32(len(nodes)) && d.Status.NumberReady == int32(len(nodes)), err
	})
	if err != nil {
		t.Error(err)
	}
}

func pinnedByMatchFields(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 && f.Values[0] == p.Spec.NodeName {
				return true
			}
		}
	}
	return false
}
