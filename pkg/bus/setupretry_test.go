package bus_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

// TestSetUpWaitsForTheCluster: two processes set up the R3 stream, the
// consumers and every bucket at once while only one of the three servers
// of the JetStream cluster is up; the other two start a few seconds later.
// Both set-ups finish once the cluster can place three replicas, instead of
// failing on the first timeout or "temporarily unavailable" (two replicas
// of `inplace run` starting together with their cluster).
func TestSetUpWaitsForTheCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node JetStream cluster")
	}
	s := bustest.NewCluster(t, 3)
	s.Start(0)
	cfg := bustest.Config()
	cfg.Replicas = 3
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = setUpAll(ctx, s.URL(), cfg)
		}()
	}
	// The sleep is the point: the set-ups must run into at least one
	// JetStream API timeout (5 s) with no quorum before the others start.
	time.Sleep(6 * time.Second)
	s.Start(1)
	s.Start(2)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
}

// setUpAll is what `inplace run` sets up on the bus before it consumes.
func setUpAll(ctx context.Context, url string, cfg bus.Config) error {
	nc, err := nats.Connect(url, nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer nc.Close()
	b, err := bus.Connect(ctx, nc, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	if err := b.EnsureConsumers(ctx, bus.ConsumerSpec{Name: "verify", Types: []string{"dev.inplace.pod.patched"}}); err != nil {
		return err
	}
	if _, err := b.KV(ctx); err != nil {
		return err
	}
	if _, err := b.Leases(ctx); err != nil {
		return err
	}
	_, err = b.Failures(ctx)
	return err
}
