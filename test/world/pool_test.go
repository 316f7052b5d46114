package world_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/world"
)

// TestSecondPool: a second pool of simulated nodes shares the cluster
// under its own scheduler name; it binds only its own pods, and Stop
// removes its nodes. (Not parallel: the other tests count nodes.)
func TestSecondPool(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	k, err := kubelet.New(w.Client(), kubelet.Options{
		Nodes: 2, NamePrefix: "pool-b", SchedulerName: "pool-b", PodCIDR: "10.246.0.0/16", Resolver: w.Registry,
	})
	if err != nil {
		t.Fatalf("new pool: %v", err)
	}
	if err := k.Start(ctx); err != nil {
		t.Fatalf("start pool: %v", err)
	}
	defer k.Stop()
	image, _ := push(t, w, "inplace/pool", "v1")
	a := runPod(t, w, simplePod(ns, "a", image))
	bPod := simplePod(ns, "b", image)
	bPod.Spec.SchedulerName = "pool-b"
	b := runPod(t, w, bPod)
	if b.Spec.NodeName != "pool-b-0" && b.Spec.NodeName != "pool-b-1" {
		t.Errorf("pod b on %s, want a pool-b node", b.Spec.NodeName)
	}
	if a.Spec.NodeName == b.Spec.NodeName || a.Status.PodIP == b.Status.PodIP {
		t.Errorf("pods share node %s / IP %s", a.Spec.NodeName, a.Status.PodIP)
	}
	k.Stop()
	for _, name := range k.NodeNames() {
		if _, err := w.Client().CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("node %s after Stop: err %v, want NotFound", name, err)
		}
	}
}
