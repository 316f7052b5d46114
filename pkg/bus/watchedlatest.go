package bus

import (
	"context"
	"slices"
	"sync"
)

// WatchLatest is KV.WatchLatest from the copy, without a watch of its own:
// once the copy holds the bucket's values, fn is called with each record
// it holds, then with each record the watch changes, read from the copy
// when fn is free (a revision replaced meanwhile is skipped, as is one fn
// was given already), one call at a time, until ctx ends. Deletes are
// left out. A change only says which key to read again.
func (w *Watched) WatchLatest(ctx context.Context, fn func(key string, rev uint64, value []byte)) error {
	c := &changed{wake: make(chan struct{}, 1), at: map[string]bool{}}
	// Registered before the values held are taken, so no change falls
	// between.
	defer w.register(func(key string, _ []byte) { c.mark(key) })()
	synced := w.Synced()
	given := map[string]uint64{}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-synced:
			synced = nil
			c.mark(w.keys()...)
			continue
		case <-c.wake:
		}
		for _, k := range c.take() {
			if ctx.Err() != nil {
				return nil
			}
			v, ok := w.held(k)
			switch {
			case !ok:
				delete(given, k)
			case given[k] != v.rev:
				given[k] = v.rev
				fn(k, v.rev, v.value)
			}
		}
	}
}

// changed are the keys to read again, in the order they came.
type changed struct {
	mu   sync.Mutex
	keys []string
	at   map[string]bool
	wake chan struct{}
}

func (c *changed) mark(keys ...string) {
	c.mu.Lock()
	for _, k := range keys {
		if !c.at[k] {
			c.at[k] = true
			c.keys = append(c.keys, k)
		}
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *changed) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := c.keys
	c.keys, c.at = nil, map[string]bool{}
	return keys
}

// keys are the keys the copy holds.
func (w *Watched) keys() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	out := make([]string, 0, len(w.vals))
	for k := range w.vals {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// held is key's value in the copy, if it holds one.
func (w *Watched) held(key string) (watchedValue, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	v, ok := w.vals[key]
	return v, ok
}
