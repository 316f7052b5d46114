package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// warmer is one replica's pre-pull, as `inplace run` makes it, on a NATS
// connection of its own and a cluster of its own (a fake client): the
// pre-pull pods in it are the ones this replica started.
type warmer struct {
	name   string
	client *fake.Clientset
	cfg    config.Defaults
	seen   atomic.Int64 // rollout records its watch delivered
	stop   func()       // cancels its context: the lease is released
	kill   func()       // closes its connection: the lease is left to expire
}

func startWarmer(t *testing.T, s *embednats.Server, name string) *warmer {
	t.Helper()
	b, nc := bustest.Replica(t, s, name)
	kv, err := b.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	leases, err := b.Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w := &warmer{name: name, cfg: config.StandardDefaults(), kill: nc.Close}
	var nodes []runtime.Object
	for _, n := range []string{"node-1", "node-2", "node-3"} {
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	w.client = fake.NewClientset(nodes...)
	watchRollouts := func(ctx context.Context, fn func(string, uint64, []byte)) error {
		return kv.WatchLatest(ctx, func(k string, rev uint64, v []byte) {
			w.seen.Add(1)
			fn(k, rev, v)
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	_, loops := app.Functions(ctx, []string{prepull.Name}, app.FunctionDeps{Kube: w.client,
		Defaults: config.NewStore(w.cfg, nil), Log: slog.New(slog.DiscardHandler),
		WatchRollouts: watchRollouts, Leases: map[string]*bus.Leases{prepull.Name: leases}})
	var wg sync.WaitGroup
	for _, loop := range loops {
		wg.Go(func() { loop(ctx) })
	}
	w.stop = func() { cancel(); wg.Wait() }
	t.Cleanup(w.stop)
	return w
}

// warmed is how many pre-pull pods w started ahead for the rollout id.
func (w *warmer) warmed(t *testing.T, id string) int {
	t.Helper()
	pods, err := w.client.CoreV1().Pods(w.cfg.PrepullNamespace).List(t.Context(),
		metav1.ListOptions{LabelSelector: prepull.LabelUpgrade + "=" + id})
	if err != nil {
		t.Fatal(err)
	}
	return len(pods.Items)
}

// TestOnePrePullWarmsAndAnotherTakesOver: of three replicas of pre-pull,
// one warms the rollouts, the holder of pre-pull's lease; the others'
// watches deliver no record at all. The holder stops (releasing the
// lease): another warms the rollout written next, and the one written
// before (it starts from the records as they are); that one is killed
// (its lease left to expire) and a rollout is written at once: the last
// replica warms it when it takes the lease.
func TestOnePrePullWarmsAndAnotherTakesOver(t *testing.T) {
	s := bustest.Server(t)
	writer, _ := bustest.Replica(t, s, "compute-spec")
	records, err := writer.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rest := map[string]*warmer{}
	for _, name := range []string{"a", "b", "c"} {
		rest[name] = startWarmer(t, s, name)
	}
	write := func(id, node string) {
		t.Helper()
		r := rollout.Rollout{UpgradeID: id, Phase: rollout.Running, Options: rollout.Options{Prepull: true},
			Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: id, UID: "uid-" + id},
			Pods: map[string]*rollout.Pod{id + "-0": {Name: id + "-0", UID: "uid-" + id + "-0", Node: node, State: rollout.Pending,
				Containers: []events.ContainerPlan{{Name: "app", FromImage: "r.example/shop/web:1", ToImage: "r.example/shop/web:" + id}}}}}
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := records.Update(t.Context(), rollout.Key(r.Workload), func([]byte) ([]byte, error) { return raw, nil }); err != nil {
			t.Fatal(err)
		}
	}
	// warms waits for a replica left to warm id, and returns it; no other
	// replica left saw a record, then or in the next second (a watch
	// delivers a record within milliseconds of its write).
	warms := func(what, id string) *warmer {
		t.Helper()
		var by *warmer
		for end := time.Now().Add(30 * time.Second); by == nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: no replica warmed %s", what, id)
			}
			for _, w := range rest {
				if w.warmed(t, id) > 0 {
					by = w
				}
			}
		}
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			for _, w := range rest {
				if n := w.seen.Load(); w != by && n != 0 {
					t.Fatalf("%s: %s, not the holder, was given %d records to warm; want none (%s warmed %s)", what, w.name, n, by.name, id)
				}
			}
		}
		return by
	}

	write("u-1", "node-1")
	first := warms("three replicas", "u-1")
	t.Logf("%s warms", first.name)
	first.stop()
	delete(rest, first.name)
	write("u-2", "node-2")
	second := warms("the holder stopped", "u-2")
	if second.warmed(t, "u-1") == 0 {
		t.Errorf("%s took over from the stopped %s but did not warm u-1, written before", second.name, first.name)
	}
	t.Logf("%s took over from the stopped %s", second.name, first.name)
	second.kill()
	delete(rest, second.name)
	write("u-3", "node-3")
	last := warms("the holder killed", "u-3")
	t.Logf("%s took over from the killed %s", last.name, second.name)
}
