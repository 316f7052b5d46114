package bus

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BindKV opens the rollout bucket on nc without creating or changing it:
// for a process that only reads rollout records (patch-pod and verify in
// Knative mode), whose NATS identity may not manage streams. The bucket is
// found on first use, so such a process may start before compute-spec has
// created it; until then every read is a retryable error, never "no
// record".
func BindKV(_ context.Context, nc *nats.Conn, cfg Config) (*KV, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	return &KV{bind: &binder{js: js, bucket: cfg.KVBucket}}, nil
}

// binder finds a bucket once.
type binder struct {
	mu     sync.Mutex
	js     jetstream.JetStream
	bucket string
	kv     jetstream.KeyValue
}

// bucket is the bucket, bound on first use when the KV was made by BindKV.
func (k *KV) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	if k.bind == nil {
		return k.kv, nil
	}
	b := k.bind
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.kv == nil {
		kv, err := b.js.KeyValue(ctx, b.bucket)
		if err != nil {
			return nil, fmt.Errorf("bus: KV %s (compute-spec creates it): %w", b.bucket, err)
		}
		b.kv = kv
	}
	return b.kv, nil
}
