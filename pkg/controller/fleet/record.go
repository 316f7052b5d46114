package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	core "github.com/inplace-dev/inplace/pkg/core/fleet"

	"github.com/inplace-dev/inplace/pkg/bus"
)

// Bucket is the hub's fleet KV bucket.
const Bucket = "inplace-fleet"

// key checks that a push id is a KV key.
var key = regexp.MustCompile(`^[-_=.a-zA-Z0-9]{1,128}$`)

// Store holds the fleet records, one per push.
type Store struct{ kv *bus.KV }

// NewStore keeps records in kv (Bucket on the hub).
func NewStore(kv *bus.KV) *Store { return &Store{kv: kv} }

// Get reads a push's record; a missing one is nil.
func (s *Store) Get(ctx context.Context, push string) (*core.Record, error) {
	b, _, err := s.kv.Get(ctx, push)
	if err != nil || b == nil {
		return nil, err
	}
	return decode(b)
}

// List reads every record.
func (s *Store) List(ctx context.Context) ([]*core.Record, error) {
	keys, err := s.kv.Keys(ctx)
	if err != nil {
		return nil, err
	}
	var out []*core.Record
	for _, k := range keys {
		r, err := s.Get(ctx, k)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// update changes a push's record with fn under compare-and-swap; fn gets
// nil for a missing record and returns bus.ErrNoChange to leave it.
func (s *Store) update(ctx context.Context, push string, fn func(*core.Record) (*core.Record, error)) error {
	_, err := s.kv.Update(ctx, push, func(old []byte) ([]byte, error) {
		var r *core.Record
		if old != nil {
			var err error
			if r, err = decode(old); err != nil {
				return nil, err
			}
		}
		next, err := fn(r)
		if err != nil {
			return nil, err
		}
		return json.Marshal(next)
	})
	return err
}

func decode(b []byte) (*core.Record, error) {
	var r core.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("fleet record: %w", err)
	}
	return &r, nil
}
