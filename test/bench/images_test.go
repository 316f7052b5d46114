package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// A cached scenario's run is measured only once every node lists its new
// image in status.images: a kubelet lists a pull up to 40s after it, and
// until then pre-pull takes the image for absent.
func TestWaitListedWaitsForEveryNode(t *testing.T) {
	const (
		image = "r.test/ns/app@sha256:1111111111111111111111111111111111111111111111111111111111111111"
		old   = "r.test/ns/app@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	)
	node := func(name string, images ...string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if len(images) > 0 {
			n.Status.Images = []corev1.ContainerImage{{Names: images}}
		}
		return n
	}
	c := fake.NewClientset(node("node-0", image), node("node-1", old))
	nodes := []string{"node-0", "node-1"}
	if err := waitListed(t.Context(), c, image, nodes, 200*time.Millisecond); err == nil {
		t.Fatal("waitListed returned while node-1 did not list the image")
	}
	watching := make(chan struct{}, 1)
	c.PrependWatchReactor("nodes", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w, err := c.Tracker().Watch(a.GetResource(), "") // the fake drops a change made before its watch
		select {
		case watching <- struct{}{}:
		default:
		}
		return true, w, err
	})
	done := make(chan error, 1)
	go func() { done <- waitListed(t.Context(), c, image, nodes, time.Minute) }()
	select {
	case err := <-done:
		t.Fatalf("waitListed returned (%v) before node-1 listed the image", err)
	case <-watching:
	}
	if _, err := c.CoreV1().Nodes().UpdateStatus(t.Context(), node("node-1", image), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waitListed still waits after node-1 listed the image")
	}
}
