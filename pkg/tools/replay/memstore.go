package replay

import (
	"context"
	"errors"
	"sync"

	"github.com/inplace-dev/inplace/pkg/bus"
)

// MemStore is rollout state in memory, seeded from the real bucket, so a
// dry run's compute-spec writes nothing that lasts.
type MemStore struct {
	mu sync.Mutex
	kv map[string][]byte
}

// NewMemStore starts with a copy of seed.
func NewMemStore(seed map[string][]byte) *MemStore {
	m := &MemStore{kv: map[string][]byte{}}
	for k, v := range seed {
		m.kv[k] = append([]byte(nil), v...)
	}
	return m
}

// Get returns a key's value; revision is 1 when present, 0 when not.
func (m *MemStore) Get(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.kv[key]
	if !ok {
		return nil, 0, nil
	}
	return append([]byte(nil), v...), 1, nil
}

// Keys lists the keys held.
func (m *MemStore) Keys(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.kv))
	for k := range m.kv {
		out = append(out, k)
	}
	return out, nil
}

// Update applies fn to a key's value.
func (m *MemStore) Update(_ context.Context, key string, fn func(old []byte) ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.kv[key]
	next, err := fn(append([]byte(nil), old...))
	if errors.Is(err, bus.ErrNoChange) {
		return old, nil
	}
	if err != nil {
		return nil, err
	}
	if old == nil && len(next) == 0 {
		return next, nil
	}
	m.kv[key] = next
	return next, nil
}
