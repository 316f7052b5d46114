package kube

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { cluster.Main(m, cluster.Options{}) }

func podSpec(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
}

// On a real API server (its controller-manager makes the ReplicaSet and
// the pods; no node runs them), the cache resolves a Deployment's pod to
// the Deployment, a bare pod to itself, lists the Deployment's pods, and
// wakes a waiter on the next change of the Deployment.
func TestCacheResolvesOwners(t *testing.T) {
	c := cluster.Shared(t)
	ns := c.NewNamespace(t)
	ctx := t.Context()
	cache, err := NewCache(c.Client(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.StartWithin(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Shutdown)

	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), MinReadySeconds: 5,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: podSpec("reg.example/web:v1")}}
	if d, err = c.Client().AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "alone", Namespace: ns}, Spec: podSpec("reg.example/alone:v1").Spec}
	if bare, err = c.Client().CoreV1().Pods(ns).Create(ctx, bare, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := events.ObjectRef{Kind: "Deployment", Namespace: ns, Name: "web"}
	var pods []*corev1.Pod
	if err := world.Eventually(ctx, time.Minute, "the Deployment's 2 pods in the cache", func(context.Context) (bool, error) {
		pods, err = cache.PodsOf(ref)
		return err == nil && len(pods) == 2, nil
	}); err != nil {
		t.Fatalf("the Deployment's 2 pods in the cache: %d, %v", len(pods), err)
	}

	w, ok, err := cache.OwnerOf(pods[0])
	if err != nil || !ok || w.Ref.Kind != "Deployment" || w.Ref.Name != "web" || w.Ref.UID != string(d.UID) ||
		w.Replicas != 2 || w.MinReadySeconds != 5 || w.RollingUpdate == nil {
		t.Errorf("owner of %s: %+v ok=%v err=%v; want Deployment web (uid %s), 2 replicas, min-ready 5, a rolling update",
			pods[0].Name, w.Ref, ok, err, d.UID)
	}
	if err := world.Eventually(ctx, time.Minute, "3 pods in the cache", func(context.Context) (bool, error) {
		p, err := cache.ListPods(labels.Everything())
		return err == nil && len(p) == 3, nil
	}); err != nil {
		t.Fatalf("3 pods in the cache: %v", err)
	}
	w, ok, err = cache.OwnerOf(bare)
	if err != nil || !ok || w.Ref.Kind != "Pod" || w.Ref.Name != "alone" {
		t.Errorf("owner of a bare pod: %+v ok=%v err=%v; want the pod itself", w.Ref, ok, err)
	}
	if _, ok, _ := cache.Get(events.ObjectRef{Kind: "Deployment", Namespace: ns, Name: "none"}); ok {
		t.Error("a Deployment that does not exist was found")
	}

	changed, stop := cache.Changed(ref)
	defer stop()
	if _, err := c.Client().AppsV1().Deployments(ns).Patch(ctx, "web", "application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Error("no wake-up after the Deployment changed")
	}
}

func TestOlderThan(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"9", "10", true}, // as integers, not strings
		{"10", "9", false},
		{"10", "10", false},
		{"", "10", false},
		{"x", "10", false},
	}
	for _, tt := range tests {
		if got := OlderThan(tt.a, tt.b); got != tt.want {
			t.Errorf("OlderThan(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestOwners(t *testing.T) {
	rs := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "p1",
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-7d9f", UID: "rs1", Controller: ptr.To(true)}}}}
	sibling := rs.DeepCopy()
	sibling.Name, sibling.UID = "web-2", "p2"
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "alone", Namespace: "shop", UID: "p3"}}
	got := Owners([]*corev1.Pod{rs, sibling, bare})
	want := map[string]string{"rs1": "ReplicaSet/shop/web-7d9f", "p3": "Pod/shop/alone"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Owners (-want +got):\n%s", diff)
	}
}
