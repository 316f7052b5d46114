package bus_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

// TestWatchedReadsTheBucketOnce: once its watch has shown the bucket, a
// record's reads are answered from it, however many (patch-pod and
// verify check every step of every pod against the record, which holds
// every pod); a key the watch has not shown is read from the bucket.
func TestWatchedReadsTheBucketOnce(t *testing.T) {
	b := bustest.New(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	kv, err := b.KV(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("pod "), 1000)
	if _, err := kv.Update(ctx, "Deployment/shop/web", func([]byte) ([]byte, error) { return want, nil }); err != nil {
		t.Fatal(err)
	}
	w := bus.NewWatched(kv)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-w.Synced():
	case err := <-done:
		t.Fatalf("watch ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not show the bucket")
	}
	for range 100 {
		got, rev, err := w.Get(ctx, "Deployment/shop/web")
		if err != nil || rev != 1 || !bytes.Equal(got, want) {
			t.Fatalf("Get: %d bytes at revision %d, %v; want the record at revision 1", len(got), rev, err)
		}
	}
	if n := w.ReadsThrough(); n != 0 {
		t.Errorf("%d reads went to the bucket; want none", n)
	}
	if got, rev, err := w.Get(ctx, "Deployment/shop/none"); got != nil || rev != 0 || err != nil {
		t.Errorf("Get of a missing record: %q, %d, %v", got, rev, err)
	}
	if n := w.ReadsThrough(); n != 1 {
		t.Errorf("a key the watch never showed: %d reads went to the bucket; want 1", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
