package bus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

// TestWatchedLatestFromTheCopy: WatchLatest gives the records the copy
// holds, then each record changed, read from the copy when fn is free:
// the revisions replaced while fn was busy are skipped, and a revision is
// given once.
func TestWatchedLatestFromTheCopy(t *testing.T) {
	b := bustest.New(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	kv, err := b.KV(ctx)
	if err != nil {
		t.Fatal(err)
	}
	put := func(key, value string) {
		t.Helper()
		if _, err := kv.Update(ctx, key, func([]byte) ([]byte, error) { return []byte(value), nil }); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "a1")
	w := bus.NewWatched(kv)
	go func() { _ = w.Run(ctx) }()
	given, done := make(chan string), make(chan struct{})
	go func() {
		_ = w.WatchLatest(ctx, func(key string, rev uint64, value []byte) {
			select {
			case given <- fmt.Sprintf("%s@%d=%s", key, rev, value):
				<-done
			case <-ctx.Done():
			}
		})
	}()
	// next takes what fn is given and lets fn return.
	next := func(want string) {
		t.Helper()
		select {
		case got := <-given:
			done <- struct{}{}
			if got != want {
				t.Fatalf("given %s; want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing given; want %s", want)
		}
	}
	// fn is busy with a's first revision (done waits) while a changes
	// twice and b is written.
	select {
	case got := <-given:
		if got != "a@1=a1" {
			t.Fatalf("given %s first; want a@1=a1", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the record held was not given")
	}
	put("a", "a2")
	put("a", "a3")
	put("b", "b1")
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if bus.Held(w, "b") == 4 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the copy did not show b")
		}
	}
	done <- struct{}{}
	next("a@3=a3")
	next("b@4=b1")
	put("c", "c1")
	next("c@5=c1")
}
