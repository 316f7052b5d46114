package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// ReadRollouts reads every rollout in the KV bucket without changing the
// bucket. A missing bucket means no rollout ever started: no rollouts.
// A value that is not a rollout is an error naming its key.
func ReadRollouts(ctx context.Context, js jetstream.JetStream, bucket string) ([]rollout.Rollout, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open KV %s: %w", bucket, err)
	}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list KV %s: %w", bucket, err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	out := make([]rollout.Rollout, 0, len(keys))
	for _, k := range keys {
		entry, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted since listed
		}
		if err != nil {
			return nil, fmt.Errorf("read KV %s key %s: %w", bucket, k, err)
		}
		var r rollout.Rollout
		if err := json.Unmarshal(entry.Value(), &r); err != nil {
			return nil, fmt.Errorf("read KV %s key %s: not a rollout: %w", bucket, k, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadRollout reads the rollout record of one workload; nil when there is
// none (or no bucket).
func ReadRollout(ctx context.Context, js jetstream.JetStream, bucket string, w events.ObjectRef) (*rollout.Rollout, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open KV %s: %w", bucket, err)
	}
	entry, err := kv.Get(ctx, rollout.Key(w))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the rollout of %s: %w", w, err)
	}
	var r rollout.Rollout
	if err := json.Unmarshal(entry.Value(), &r); err != nil {
		return nil, fmt.Errorf("read the rollout of %s: not a rollout: %w", w, err)
	}
	return &r, nil
}
