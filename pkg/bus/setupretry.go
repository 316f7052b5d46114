package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Setting up the stream and the buckets is retried while the JetStream
// cluster cannot answer yet: right after its servers start it elects a
// meta leader, and an R3 stream or bucket needs three peers; two processes
// setting up at once (two replicas starting together) meet the same
// window. Anything else (a permission or configuration error) fails at once.
const (
	setupBudget  = 90 * time.Second
	setupAttempt = 10 * time.Second
	setupFirst   = 250 * time.Millisecond
	setupMost    = 5 * time.Second
)

// transientCodes are the JetStream API errors of a cluster still electing
// or short of peers.
var transientCodes = map[jetstream.ErrorCode]bool{
	10008: true, // JetStream system temporarily unavailable
	10009: true, // JetStream cluster can not handle request (not the leader)
	10023: true, // insufficient resources (peers not yet known)
	10074: true, // no suitable peers for placement
}

// transientSetup reports whether a setup error may go away by itself.
func transientSetup(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return transientCodes[api.ErrorCode]
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// setUp runs fn until it succeeds, fails for good, or the budget (or ctx)
// ends; each attempt has its own timeout and the waits between grow.
// log may be nil.
func setUp(ctx context.Context, log *slog.Logger, what string, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, setupBudget)
	defer cancel()
	wait := setupFirst
	for attempt := 1; ; attempt++ {
		actx, acancel := context.WithTimeout(ctx, setupAttempt)
		err := fn(actx)
		acancel()
		if err == nil || !transientSetup(err) {
			return err
		}
		if log != nil {
			log.Info("JetStream not ready, setting up again", "what", what, "attempt", attempt, "in", wait, "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still failing after %d attempts in %s)", err, attempt, setupBudget)
		case <-time.After(wait):
		}
		wait = min(2*wait, setupMost)
	}
}

// createKV creates or updates a bucket, retried as setUp does.
func createKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (kv jetstream.KeyValue, err error) {
	err = setUp(ctx, nil, "bucket "+cfg.Bucket, func(ctx context.Context) (err error) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, cfg)
		return err
	})
	return kv, err
}
