package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// The wait before a write of a record is as long as its last write took,
// or spacingPerPod for each pod it holds if that is longer (a large
// record's write costs every watcher of it more than its writer), at most
// maxSpacing.
func TestSpacingGrowsWithTheRecordsPods(t *testing.T) {
	for _, tc := range []struct {
		name string
		took time.Duration
		pods int
		want time.Duration
	}{
		{name: "nothing written yet"},
		{name: "a small record: its write's time", took: 2 * time.Millisecond, pods: 12, want: 2 * time.Millisecond},
		{name: "a thousand pods", took: 2 * time.Millisecond, pods: 1000, want: 50 * time.Millisecond},
		{name: "a slow write of a thousand pods", took: 80 * time.Millisecond, pods: 1000, want: 80 * time.Millisecond},
		{name: "ten thousand pods: the bound", took: 2 * time.Millisecond, pods: 10000, want: maxSpacing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c commits
			if tc.took != 0 || tc.pods != 0 {
				c.wrote("k", tc.took, tc.pods)
			}
			if got := c.spacing("k"); got != tc.want {
				t.Errorf("spacing = %v, want %v", got, tc.want)
			}
		})
	}
}

// Outcomes queued for one write are planned from one observation of the
// cluster, made by their writer right before the write, not one each: a
// workload's pods are read once for them (here 4 outcomes of 10 pods).
func TestQueuedOutcomesObserveTheClusterOnce(t *testing.T) {
	const old, target, n, k = "r.example/shop/web:1.2.0", "r.example/shop/web:1.3.0", 10, 4
	w := newBenchWorkload(n)
	ref, cache, store, ctl := w.ref, w.cache, w.store, w.ctl
	key := rollout.Key(ref)
	rv := 0
	w.onImage(old, &rv)
	raw, err := json.Marshal(w.planned("u-1"))
	if err != nil {
		t.Fatal(err)
	}
	store.raw, store.rev = raw, 1
	ctl.commits.wrote(key, time.Millisecond, 0)
	ctl.commits.wait = func(context.Context, string, time.Duration) {
		for {
			ctl.commits.mu.Lock()
			queued := len(ctl.commits.queue[key])
			ctl.commits.mu.Unlock()
			if queued == k {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	for i := range k {
		cache.pods[i] = benchPod(i, n+i+1, target)
		name := cache.pods[i].Name
		in := cloudevents.NewEvent()
		in.SetID(fmt.Sprint("outcome-", i))
		wg.Go(func() {
			_, _, err := ctl.replanChecked(t.Context(), in, ref, nil, recordSuccess(name, in.ID()), false)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := store.rev - 1; got != 1 {
		t.Errorf("%d queued outcomes made %d writes; want 1", k, got)
	}
	if got := cache.reads.Load(); got != 1 {
		t.Errorf("%d queued outcomes read the workload's pods %d times; want once", k, got)
	}
	got, err := Decode(store.raw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range k {
		if p := got.Pods[cache.pods[i].Name]; p.State != rollout.Succeeded {
			t.Errorf("pod %s is %s; want Succeeded", p.Name, p.State)
		}
	}
}

// A writer's wait ends once as many changes have queued as are handled at
// once (Deps.Workers): no other change can join its write, and waiting on
// would only hold back the ones that did.
func TestTheWaitEndsWhenTheQueueIsFull(t *testing.T) {
	c := commits{full: 3}
	c.wrote("k", time.Hour, 0) // the longest wait: maxSpacing
	c.enqueue("k", &commit{})
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		c.pause(t.Context(), "k")
		done <- time.Since(start)
	}()
	for {
		c.mu.Lock()
		waiting := c.filled["k"] != nil
		c.mu.Unlock()
		if waiting {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c.enqueue("k", &commit{})
	c.enqueue("k", &commit{})
	if took := <-done; took >= maxSpacing {
		t.Errorf("the wait with %d changes queued took %v; want it ended when the queue filled", c.full, took)
	}
	// Full already: no wait at all.
	start := time.Now()
	c.pause(t.Context(), "k")
	if took := time.Since(start); took >= maxSpacing {
		t.Errorf("the wait with a full queue took %v; want none", took)
	}
}
