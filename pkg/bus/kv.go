package bus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KV is a JetStream key-value bucket whose updates are compare-and-swap on
// the key's revision.
type KV struct {
	kv jetstream.KeyValue
	// bind finds the bucket on first use when kv is nil (BindKV).
	bind *binder
	// conflicts counts the writes that lost a compare-and-swap.
	conflicts atomic.Int64
	// writes counts the values written (each update's write that took).
	writes atomic.Int64
	// reads counts the values read (Get, and each update's read).
	reads atomic.Int64
}

// Conflicts is how many of Update's writes lost a compare-and-swap to
// another writer (and were read, changed and written again).
func (k *KV) Conflicts() int64 { return k.conflicts.Load() }

// Writes counts the values Update wrote to the bucket so far (a write
// that lost its compare-and-swap is not one).
func (k *KV) Writes() int64 { return k.writes.Load() }

// Reads counts the values read from the bucket so far.
func (k *KV) Reads() int64 { return k.reads.Load() }

// KV opens (creating or updating) the rollout bucket; an attached bus binds
// to it.
func (b *Bus) KV(ctx context.Context) (*KV, error) {
	if b.attached {
		return &KV{bind: &binder{js: b.js, bucket: b.cfg.KVBucket}}, nil
	}
	return openKV(ctx, b.js, b.cfg)
}

// OpenKV opens (creating or updating) the rollout bucket on nc without
// setting up the stream: for a process that keeps rollout state but
// consumes nothing from the bus (a Knative Service).
func OpenKV(ctx context.Context, nc *nats.Conn, cfg Config) (*KV, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	return openKV(ctx, js, cfg)
}

func openKV(ctx context.Context, js jetstream.JetStream, cfg Config) (*KV, error) {
	storage := jetstream.FileStorage
	if cfg.MemoryStorage {
		storage = jetstream.MemoryStorage
	}
	kv, err := createKV(ctx, js, jetstream.KeyValueConfig{
		Bucket:      cfg.KVBucket,
		Description: "inplace rollout progress",
		History:     5,
		Storage:     storage,
		Replicas:    max(cfg.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("bus: set up KV %s: %w", cfg.KVBucket, err)
	}
	return &KV{kv: kv}, nil
}

// Get returns the value and revision of key; a missing key is (nil, 0, nil).
func (k *KV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	kv, err := k.bucket(ctx)
	if err != nil {
		return nil, 0, err
	}
	k.reads.Add(1)
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("kv get %s: %w", key, err)
	}
	return e.Value(), e.Revision(), nil
}

// ErrNoChange may be returned by an Update function to leave the key as it is.
var ErrNoChange = errors.New("kv: no change")

// Update reads key, calls fn with its value (nil when missing) and writes
// fn's result only if nobody wrote the key in between; on a conflict it
// reads again and retries. fn must be pure: it may run several times.
// It returns the value stored (or the unchanged one when fn returns ErrNoChange).
func (k *KV) Update(ctx context.Context, key string, fn func(old []byte) ([]byte, error)) ([]byte, error) {
	v, _, err := k.UpdateRevision(ctx, key, fn)
	return v, err
}

// UpdateRevision is Update, also returning the revision of the value it
// returns (the one written, or the unchanged one's).
func (k *KV) UpdateRevision(ctx context.Context, key string, fn func(old []byte) ([]byte, error)) ([]byte, uint64, error) {
	return k.update(ctx, key, nil, 0, fn)
}

// UpdateRevisionFrom is UpdateRevision starting from old, key's value at
// revision rev as the caller last wrote it: the first compare-and-swap is
// made against rev without reading key (a value of hundreds of kilobytes
// is not fetched again), and key is read only when another writer moved
// it on since, or when fn refuses the caller's value (its refusal is asked
// again of the key as it is: fn must be pure). rev 0 reads key first, as
// UpdateRevision.
func (k *KV) UpdateRevisionFrom(ctx context.Context, key string, old []byte, rev uint64, fn func(old []byte) ([]byte, error)) ([]byte, uint64, error) {
	return k.update(ctx, key, old, rev, fn)
}

// update is UpdateRevision, from old at rev when rev is not 0.
func (k *KV) update(ctx context.Context, key string, old []byte, rev uint64, fn func(old []byte) ([]byte, error)) ([]byte, uint64, error) {
	kv, err := k.bucket(ctx)
	if err != nil {
		return nil, 0, err
	}
	given := rev != 0 // fn's first run is on the caller's value, unread
	for attempt := 0; ; attempt++ {
		if attempt > 0 || !given {
			if old, rev, err = k.Get(ctx, key); err != nil {
				return nil, 0, err
			}
		}
		next, err := fn(old)
		if err != nil && given && attempt == 0 {
			// An answer on the caller's value may be an answer on a
			// stale one: asked again on the key as it is.
			continue
		}
		if errors.Is(err, ErrNoChange) {
			return old, rev, nil
		}
		if err != nil {
			return nil, 0, err
		}
		var wrote uint64
		if rev == 0 {
			wrote, err = kv.Create(ctx, key, next)
		} else {
			wrote, err = kv.Update(ctx, key, next, rev)
		}
		if err == nil {
			k.writes.Add(1)
			return next, wrote, nil
		}
		if !isConflict(err) || attempt >= 50 {
			return nil, 0, fmt.Errorf("kv update %s: %w", key, err)
		}
		k.conflicts.Add(1)
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
	}
}

func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}

// Delete removes key.
func (k *KV) Delete(ctx context.Context, key string) error {
	kv, err := k.bucket(ctx)
	if err != nil {
		return err
	}
	if err := kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("kv delete %s: %w", key, err)
	}
	return nil
}

// Keys lists the keys in the bucket.
func (k *KV) Keys(ctx context.Context) ([]string, error) {
	kv, err := k.bucket(ctx)
	if err != nil {
		return nil, err
	}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("kv keys: %w", err)
	}
	var keys []string
	for key := range lister.Keys() {
		keys = append(keys, key)
	}
	return keys, nil
}

// Watch calls fn with every record of the bucket, then with each update,
// until ctx ends (a deleted record is not reported). It is level-triggered:
// fn sees the current value of each key on start and after every change.
func (k *KV) Watch(ctx context.Context, fn func(key string, value []byte)) error {
	return k.WatchRevisions(ctx, func(key string, _ uint64, value []byte) { fn(key, value) })
}

// WatchRevisions is Watch with each value's revision.
func (k *KV) WatchRevisions(ctx context.Context, fn func(key string, rev uint64, value []byte)) error {
	return k.watch(ctx, func(e jetstream.KeyValueEntry, _ <-chan jetstream.KeyValueEntry) {
		if e != nil { // nil marks the end of the initial values
			fn(e.Key(), e.Revision(), e.Value())
		}
	})
}

// watch runs a watch of every key of the bucket, deletes left out, and
// hands each update to take with the channel of those still waiting, until
// ctx ends; it returns an error when the watch cannot start or ends by
// itself.
func (k *KV) watch(ctx context.Context, take func(e jetstream.KeyValueEntry, more <-chan jetstream.KeyValueEntry)) error {
	kv, err := k.bucket(ctx)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("bus: watch KV: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("bus: KV watch ended")
			}
			take(e, w.Updates())
		}
	}
}
