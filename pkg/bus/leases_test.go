package bus_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

// holders are n replicas' leases on one bucket.
func holders(t *testing.T, b *bus.Bus, n int) []*bus.Leases {
	t.Helper()
	var ls []*bus.Leases
	for range n {
		l, err := b.Leases(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

func TestLeaseOneHolderAtATime(t *testing.T) {
	b := bustest.New(t, nil)
	ls := holders(t, b, 8)
	var won atomic.Int32
	var releases sync.Map
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := l.Take(t.Context(), "verify", "uid-1")
			switch {
			case errors.Is(err, bus.ErrHeld):
			case err != nil:
				t.Error(err)
			default:
				won.Add(1)
				releases.Store(i, release)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d of 8 replicas took the lease of one pod at once; want 1", won.Load())
	}
	// Another function's lease on the same pod, and another pod, are apart.
	if _, err := ls[0].Take(t.Context(), "patch-pod", "uid-1"); err != nil {
		t.Errorf("patch-pod's lease of the pod: %v", err)
	}
	releases.Range(func(k, v any) bool {
		v.(func())()
		if _, err := ls[(k.(int)+1)%8].Take(t.Context(), "verify", "uid-1"); err != nil {
			t.Errorf("after release, another replica could not take the lease: %v", err)
		}
		return true
	})
}

func TestLeaseOfADeadHolderExpires(t *testing.T) {
	b := bustest.New(t, nil)
	ls := holders(t, b, 2)
	dead, next := ls[0], ls[1]
	start := time.Now()
	now := start
	bus.SetClock(next, func() time.Time { return now })
	releaseDead, err := dead.Take(t.Context(), "patch-pod", "uid-2")
	if err != nil {
		t.Fatal(err)
	}
	now = start.Add(next.Hold / 2)
	if _, err := next.Take(t.Context(), "patch-pod", "uid-2"); !errors.Is(err, bus.ErrHeld) {
		t.Fatalf("took a live lease: %v", err)
	}
	now = start.Add(next.Hold + time.Second)
	release, err := next.Take(t.Context(), "patch-pod", "uid-2")
	if err != nil {
		t.Fatalf("the expired lease of a dead holder was not taken over: %v", err)
	}
	// The old holder's late release leaves the new lease alone.
	releaseDead()
	if _, err := dead.Take(t.Context(), "patch-pod", "uid-2"); !errors.Is(err, bus.ErrHeld) {
		t.Fatalf("a stale release freed the new holder's lease: %v", err)
	}
	release()
	if _, err := dead.Take(t.Context(), "patch-pod", "uid-2"); err != nil {
		t.Fatalf("released lease not free: %v", err)
	}
}

// A pod's first lease at a step is one request to the server (the create),
// where reading the key first made it two; a lease released before is
// taken over its delete marker, and one held is refused as before.
func TestAFirstLeaseIsOneRequest(t *testing.T) {
	b := bustest.New(t, nil)
	ls := holders(t, b, 2)
	nc := b.JetStream().Conn()
	requests := func(take func() error) (uint64, error) {
		before := nc.Stats().OutMsgs
		err := take()
		return nc.Stats().OutMsgs - before, err
	}
	var release func()
	n, err := requests(func() (err error) { release, err = ls[0].Take(t.Context(), "verify", "uid-1"); return err })
	if err != nil || n != 1 {
		t.Fatalf("a first lease: %d requests, %v; want 1, taken", n, err)
	}
	if _, err := ls[1].Take(t.Context(), "verify", "uid-1"); !errors.Is(err, bus.ErrHeld) {
		t.Errorf("another holder took a held lease: %v; want ErrHeld", err)
	}
	release()
	n, err = requests(func() (err error) { release, err = ls[1].Take(t.Context(), "verify", "uid-1"); return err })
	if err != nil || n != 3 {
		t.Fatalf("a released lease: %d requests, %v; want 3 (create, read its delete marker, update), taken", n, err)
	}
	release()
}
