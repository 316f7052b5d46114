package world_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/world"
)

// TestManyPods: the simulated nodes keep up with a few hundred pods: a
// 300-replica Deployment gets Ready, then every pod's image is patched in
// place and all restart on the new image.
//
// It is not parallel: its thousands of kubelet Events overflow the event
// broadcaster's fixed queue, which (like a real kubelet's) drops on
// overflow, and tests that wait for one particular Event would lose it.
// Sequential tests run before the parallel ones, so it runs alone.
func TestManyPods(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	const n = 300
	v1, _ := push(t, w, "inplace/many", "v1")
	v2, id2 := push(t, w, "inplace/many", "v2")
	start := time.Now()
	if _, err := w.Client().AppsV1().Deployments(ns).Create(ctx, deployment("many", ns, v1, n), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	pods, err := world.WaitPods(ctx, w.Client(), ns, "app=many", 3*time.Minute, fmt.Sprintf("%d Ready", n), world.AllReady(n))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pods Ready in %s", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	for _, p := range pods {
		patchImage(t, w, ns, p.Name, "app", v2)
	}
	_, err = world.WaitPods(ctx, w.Client(), ns, "app=many", 3*time.Minute, "all restarted on v2", func(ps []corev1.Pod) bool {
		if !world.AllReady(n)(ps) {
			return false
		}
		for i := range ps {
			if s := world.ContainerStatus(&ps[i], "app"); s.ImageID != id2 || s.RestartCount != 1 {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pods patched and restarted in place in %s", n, time.Since(start).Round(time.Millisecond))
}
