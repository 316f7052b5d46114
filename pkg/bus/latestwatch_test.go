package bus_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

// TestWatchLatestEndsOnTheNewestValue: a reader that is slow while a key
// is written again and again is called, in the end, with its newest value,
// and never with a revision older than one it saw.
func TestWatchLatestEndsOnTheNewestValue(t *testing.T) {
	b := bustest.New(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	kv, err := b.KV(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const key, writes = "Deployment/shop/web", 200
	seen := make(chan uint64, writes+1)
	done := make(chan error, 1)
	go func() {
		done <- kv.WatchLatest(ctx, func(k string, rev uint64, v []byte) {
			if k != key || string(v) != strconv.FormatUint(rev, 10) {
				t.Errorf("WatchLatest gave %s at %d: %q", k, rev, v)
			}
			time.Sleep(time.Millisecond) // a slow reader
			seen <- rev
		})
	}()
	for range writes {
		if _, err := kv.Update(ctx, key, func(old []byte) ([]byte, error) {
			n, _ := strconv.Atoi(string(old))
			return fmt.Append(nil, n+1), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var last uint64
	calls := 0
	deadline := time.After(10 * time.Second)
	for last != writes {
		select {
		case rev := <-seen:
			if rev <= last {
				t.Fatalf("revision %d after %d", rev, last)
			}
			last = rev
			calls++
		case err := <-done:
			t.Fatalf("watch ended: %v", err)
		case <-deadline:
			t.Fatalf("the reader saw revision %d last; want %d", last, writes)
		}
	}
	t.Logf("%d writes, %d calls", writes, calls)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchLatest: %v", err)
	}
}
