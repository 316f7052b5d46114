package app

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// A process that keeps a copy of the rollout records (it runs verify
// here) warms pre-pulls from that copy: with pre-pull warming, the
// records' bucket still has one watch for the process, not one more for
// pre-pull, which would bring every revision of every record again.
func TestPrePullWarmsFromTheProcessCopy(t *testing.T) {
	p, l, kv, log := busProcess(t, prepull.Name, verify.Name)
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
	cfg := config.StandardDefaults()
	a := &App{Kube: client, Events: client, Defaults: config.NewStore(cfg, nil)}
	if err := a.buildFunctions(t.Context(), p, l, log); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	runBackground(ctx, &wg, a)

	r := rollout.Rollout{UpgradeID: "u-1", Phase: rollout.Running, Options: rollout.Options{Prepull: true},
		Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"},
		Pods: map[string]*rollout.Pod{"web-0": {Name: "web-0", UID: "uid-web-0", Node: "node-1", State: rollout.Pending,
			Containers: []events.ContainerPlan{{Name: "app", FromImage: "r.example/shop/web:1", ToImage: "r.example/shop/web:2"}}}}}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Update(ctx, rollout.Key(r.Workload), func([]byte) ([]byte, error) { return raw, nil }); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pods, err := client.CoreV1().Pods(cfg.PrepullNamespace).List(ctx, metav1.ListOptions{LabelSelector: prepull.LabelUpgrade + "=u-1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pre-pull did not warm the rollout's node")
		}
	}
	if n := recordWatches(ctx, t, l, p); n != 1 {
		t.Errorf("while pre-pull warms, the records' bucket has %d consumers (watches); want 1", n)
	}
}
