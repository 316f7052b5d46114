package computespec_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/rollout"
)

// counting is the KV counting the runs of each update function: a run
// more than the updates is a compare-and-swap that failed and was redone
// (the whole record decoded, planned and encoded again).
type counting struct {
	computespec.Store
	calls, runs atomic.Int64
}

func (c *counting) Update(ctx context.Context, key string, fn func([]byte) ([]byte, error)) ([]byte, error) {
	c.calls.Add(1)
	return c.Store.Update(ctx, key, func(old []byte) ([]byte, error) {
		c.runs.Add(1)
		return fn(old)
	})
}

// Outcomes of one rollout handled at once by one process's workers each
// write the record once: they take turns instead of failing their
// compare-and-swap on each other, and the rollout still counts every pod.
func TestConcurrentOutcomesWriteTheRecordOnceEach(t *testing.T) {
	e := newEnv(t)
	store := &counting{Store: e.kv}
	log := slog.New(slog.DiscardHandler)
	e.fn = computespec.New(computespec.Deps{Cache: e.cache, Store: store, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log), Decoded: &rollout.Decoded{}})
	web12, _ := e.image("web", "1.2.0")
	_, d13 := e.image("web", "1.3.0")
	const n = 8
	e.create(spec{name: "web", replicas: n, containers: []corev1.Container{container("app", web12)},
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	planned := plans(t, e.handle(e.pushed("push-1", "web", "1.3.0", d13)))
	if len(planned) != n {
		t.Fatalf("planned %d pods; want %d (max-unavailable 100%%)", len(planned), n)
	}
	store.calls.Store(0)
	store.runs.Store(0)
	var wg sync.WaitGroup
	outs := make(chan []cloudevents.Event, n)
	for _, p := range planned {
		in := e.outcome(events.UpgradeSucceeded, p, "")
		wg.Go(func() {
			got, err := e.fn.Handle(t.Context(), in)
			if err != nil {
				t.Error(err)
			}
			outs <- got
		})
	}
	wg.Wait()
	if calls, runs := store.calls.Load(), store.runs.Load(); runs != calls {
		t.Errorf("%d outcomes made %d record updates that ran %d times; want no update run twice (a failed compare-and-swap)", n, calls, runs)
	}
	r := e.state("Deployment", "web")
	for _, p := range r.Pods {
		if p.State != rollout.Succeeded {
			t.Errorf("pod %s is %s; want Succeeded", p.Name, p.State)
		}
	}
}
