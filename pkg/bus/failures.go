package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// Failures counts the failed deliveries of each message per function, apart
// from its "not yet" redeliveries: NAK carries no header, so JetStream's
// NumDelivered counts both, and a message that waited a few times would
// otherwise be dead-lettered by its first transient failure.
//
// The counts live in a KV bucket of their own, keyed by function and stream
// sequence: a redelivery that lands on another replica of the function, or on
// the process restarted after a crash, sees the failures before it. Entries
// expire with the stream's MaxAge (a message cannot be redelivered once the
// stream dropped it). Only failures write: the happy path costs nothing.
type Failures struct {
	kv jetstream.KeyValue
}

// Failures opens (creating or updating) the failure-count bucket; an
// attached bus finds it.
func (b *Bus) Failures(ctx context.Context) (*Failures, error) {
	if b.attached {
		kv, err := b.js.KeyValue(ctx, b.cfg.FailuresBucket())
		if err != nil {
			return nil, fmt.Errorf("bus: KV %s (the operator sets it up): %w", b.cfg.FailuresBucket(), err)
		}
		return &Failures{kv: kv}, nil
	}
	storage := jetstream.FileStorage
	if b.cfg.MemoryStorage {
		storage = jetstream.MemoryStorage
	}
	kv, err := createKV(ctx, b.js, jetstream.KeyValueConfig{
		Bucket:      b.cfg.FailuresBucket(),
		Description: "inplace: failed deliveries per function and stream sequence",
		History:     1,
		TTL:         b.cfg.MaxAge,
		Storage:     storage,
		Replicas:    max(b.cfg.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("bus: set up KV %s: %w", b.cfg.FailuresBucket(), err)
	}
	return &Failures{kv: kv}, nil
}

// FailuresBucket names the bucket of failure counts.
func (c Config) FailuresBucket() string { return c.KVBucket + "-failures" }

func failureKey(function string, seq uint64) string {
	return function + "." + strconv.FormatUint(seq, 10)
}

// Add records one more failure of the message at stream sequence seq in
// function and returns how many it has had.
func (f *Failures) Add(ctx context.Context, function string, seq uint64) (int, error) {
	key := failureKey(function, seq)
	for attempt := 0; ; attempt++ {
		n, rev, err := f.get(ctx, key)
		if err != nil {
			return 0, err
		}
		val := []byte(strconv.Itoa(n + 1))
		if rev == 0 {
			_, err = f.kv.Create(ctx, key, val)
		} else {
			_, err = f.kv.Update(ctx, key, val, rev)
		}
		if err == nil {
			return n + 1, nil
		}
		if !isConflict(err) || attempt >= 10 {
			return 0, fmt.Errorf("bus: count failure %s: %w", key, err)
		}
	}
}

// Count returns how many failures the message has had.
func (f *Failures) Count(ctx context.Context, function string, seq uint64) (int, error) {
	n, _, err := f.get(ctx, failureKey(function, seq))
	return n, err
}

func (f *Failures) get(ctx context.Context, key string) (int, uint64, error) {
	e, err := f.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("bus: read failures %s: %w", key, err)
	}
	n, err := strconv.Atoi(string(e.Value()))
	if err != nil {
		return 0, e.Revision(), nil // unreadable: count afresh
	}
	return n, e.Revision(), nil
}
