package controller_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// counting is the KV counting the runs of each update function: a run
// more than the updates is a compare-and-swap that failed and was redone
// (the whole record decoded, planned and encoded again).
type counting struct {
	controller.Store
	calls, runs, gets atomic.Int64
	// hold, when set, keeps the first update from starting until it is
	// closed.
	hold  chan struct{}
	first sync.Once
}

func (c *counting) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *counting) Update(ctx context.Context, key string, fn func([]byte) ([]byte, error)) ([]byte, error) {
	c.calls.Add(1)
	if c.hold != nil {
		c.first.Do(func() { <-c.hold })
	}
	return c.Store.Update(ctx, key, func(old []byte) ([]byte, error) {
		c.runs.Add(1)
		return fn(old)
	})
}

// newCountingEnv is newEnv with compute-spec writing through a counting
// store.
func newCountingEnv(t *testing.T) (*env, *counting) {
	e := newEnv(t)
	store := &counting{Store: e.KV}
	log := slog.New(slog.DiscardHandler)
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: store, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log), Decoded: &rollout.Decoded{}})
	return e, store
}

// succeedAtOnce hands compute-spec every plan's upgrade.succeeded at once,
// each in its own goroutine; wait returns what each handling emitted.
func (e *env) succeedAtOnce(planned map[string]events.Plan) (wait func() [][]cloudevents.Event) {
	var wg sync.WaitGroup
	outs := make(chan []cloudevents.Event, len(planned))
	for _, p := range planned {
		in := e.Outcome(events.UpgradeSucceeded, p, "")
		wg.Go(func() {
			got, err := e.Fn.Handle(e.T.Context(), in)
			if err != nil {
				e.T.Error(err)
			}
			outs <- got
		})
	}
	return func() [][]cloudevents.Event {
		wg.Wait()
		close(outs)
		var all [][]cloudevents.Event
		for got := range outs {
			all = append(all, got)
		}
		return all
	}
}

// Outcomes of one rollout handled at once by one process's workers write
// the record without redoing one another's work: they take turns instead
// of failing their compare-and-swap on each other (and share a write when
// they queue), and the rollout still counts every pod.
func TestConcurrentOutcomesWriteTheRecordOnceEach(t *testing.T) {
	e, store := newCountingEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	const n = 8
	e.Create(controllertest.Spec{Name: "web", Replicas: n, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	planned := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(planned) != n {
		t.Fatalf("planned %d pods; want %d (max-unavailable 100%%)", len(planned), n)
	}
	store.calls.Store(0)
	store.runs.Store(0)
	e.succeedAtOnce(planned)()
	if calls, runs := store.calls.Load(), store.runs.Load(); runs != calls {
		t.Errorf("%d outcomes made %d record updates that ran %d times; want no update run twice (a failed compare-and-swap)", n, calls, runs)
	}
	r := e.State("Deployment", "web")
	for _, p := range r.Pods {
		if p.State != rollout.Succeeded {
			t.Errorf("pod %s is %s; want Succeeded", p.Name, p.State)
		}
	}
}

// Outcomes that queue behind a record's write share the next one: one
// decode, plan and encode of the whole record for all of them, not one
// each (a record holds every pod, so a write per outcome makes a rollout
// of n pods O(n²)). Each still plans under its own input, so the pods
// that the freed budget allows are planned once, by one of them, and a
// redelivered input finds its own plans again.
func TestQueuedOutcomesShareOneWrite(t *testing.T) {
	e, store := newCountingEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	const n, budget = 10, 5
	e.Create(controllertest.Spec{Name: "web", Replicas: n, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "5"}})
	first := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(first) != budget {
		t.Fatalf("planned %d pods; want %d (max-unavailable %d)", len(first), budget, budget)
	}
	store.calls.Store(0)
	store.gets.Store(0)
	store.hold = make(chan struct{})
	wait := e.succeedAtOnce(first)
	// Every outcome has read the record before the first write may start:
	// the others queue behind it.
	deadline := time.Now().Add(30 * time.Second)
	for store.gets.Load() < budget && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // from their read to the queue: no I/O
	close(store.hold)
	outs := wait()
	if calls := store.calls.Load(); calls >= budget {
		t.Errorf("%d queued outcomes made %d record writes; want them to share writes (fewer than %d)", budget, calls, budget)
	}
	second := map[string]int{}
	for _, got := range outs {
		for name := range controllertest.Plans(t, got) {
			second[name]++
		}
	}
	if len(second) != n-budget {
		t.Errorf("the outcomes planned %d pods (%v); want the other %d", len(second), second, n-budget)
	}
	r := e.State("Deployment", "web")
	for name, p := range r.Pods {
		_, wasFirst := first[name]
		switch {
		case wasFirst && p.State != rollout.Succeeded:
			t.Errorf("pod %s is %s; want Succeeded", name, p.State)
		case !wasFirst && (p.State != rollout.InFlight || second[name] != 1):
			t.Errorf("pod %s is %s, emitted %d times; want InFlight, planned once", name, p.State, second[name])
		}
	}
}

// The record compute-spec writes is shared, as written, with the
// process's readers of that revision (the guards of patch-pod and verify,
// pre-pull, its own next observation): none of them decodes the whole
// record again (here the bytes handed to Decoded are not even JSON).
func TestTheWrittenRecordIsReadWithoutADecode(t *testing.T) {
	e := newEnv(t)
	dec := &rollout.Decoded{}
	log := slog.New(slog.DiscardHandler)
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: e.KV, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log), Decoded: dec})
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})
	first := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(first) != 1 {
		t.Fatalf("planned %d pods; want 1", len(first))
	}
	var p events.Plan
	for _, p = range first {
	}
	e.Handle(e.Outcome(events.UpgradeSucceeded, p, ""))
	key := "Deployment/" + e.NS + "/web"
	_, rev, err := e.KV.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	r, err := dec.Get(key, rev, []byte("{not the record"))
	if err != nil {
		t.Fatalf("revision %d of %s was decoded again: %v; want compute-spec's own record shared", rev, key, err)
	}
	if got := r.Pods[p.Pod.Name]; got == nil || got.State != rollout.Succeeded {
		t.Errorf("the shared record has %s as %+v; want Succeeded", p.Pod.Name, got)
	}
}
