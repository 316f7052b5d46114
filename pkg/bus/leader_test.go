package bus_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

// replica is one process's leader loop on a connection of its own.
type replica struct {
	name    string
	leading chan string // its name, each time it takes the lease
	stop    context.CancelFunc
	done    chan struct{}
}

// leaders counts the replicas leading at once, and the most at any time.
type leaders struct{ now, most atomic.Int32 }

func (c *leaders) lead(ctx context.Context) {
	n := c.now.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	<-ctx.Done()
	c.now.Add(-1)
}

func startLeader(t *testing.T, b *bus.Bus, name string, c *leaders, took chan string) *replica {
	t.Helper()
	l, err := b.Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r := &replica{name: name, stop: cancel, done: make(chan struct{})}
	ld := bus.Leader{Leases: l, Name: "pod-watcher", Hold: 3 * time.Second, Log: slog.New(slog.DiscardHandler)}
	go func() {
		defer close(r.done)
		ld.Run(ctx, func(ctx context.Context) {
			took <- name
			c.lead(ctx)
		})
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func waitLeader(t *testing.T, took chan string, within time.Duration) string {
	t.Helper()
	select {
	case name := <-took:
		return name
	case <-time.After(within):
		t.Fatalf("no replica took the lease within %s", within)
		return ""
	}
}

// TestLeaderOneAtATimeAndTakeOver: of several replicas one leads; a leader
// killed without a word (its connection gone, the lease left behind) is
// replaced once its lease expires, and one that stops releases the lease
// for another at once; never two at a time.
func TestLeaderOneAtATimeAndTakeOver(t *testing.T) {
	s := bustest.Server(t)
	connect := func(name string) (*bus.Bus, func()) {
		b, nc := bustest.Replica(t, s, name)
		return b, nc.Close
	}
	var c leaders
	took := make(chan string, 4)
	busA, killA := connect("a")
	startLeader(t, busA, "a", &c, took)
	if got := waitLeader(t, took, 5*time.Second); got != "a" {
		t.Fatalf("first leader %q, want a (alone)", got)
	}
	rest := map[string]*replica{}
	for _, name := range []string{"b", "c"} {
		b, _ := connect(name)
		rest[name] = startLeader(t, b, name, &c, took)
	}

	killA()
	killed := time.Now()
	next := waitLeader(t, took, 10*time.Second)
	if next == "a" {
		t.Fatal("the killed replica led again")
	}
	if d := time.Since(killed); d > 6*time.Second {
		t.Errorf("took over %s after the kill, want within the 3s hold and a look", d)
	}
	t.Logf("%s took over %s after a was killed", next, time.Since(killed).Round(time.Millisecond))

	rest[next].stop()
	stopped := time.Now()
	delete(rest, next)
	last := waitLeader(t, took, 5*time.Second)
	if _, ok := rest[last]; !ok {
		t.Errorf("after %s stopped, %q leads; want the one left", next, last)
	}
	if d := time.Since(stopped); d > 2500*time.Millisecond {
		t.Errorf("took over %s after the leader stopped, want at the next look (1s)", d)
	}
	t.Logf("%s took over %s after %s stopped", last, time.Since(stopped).Round(time.Millisecond), next)
	if m := c.most.Load(); m != 1 {
		t.Errorf("%d replicas led at once, want 1", m)
	}
}
