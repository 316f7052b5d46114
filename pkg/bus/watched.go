package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"
)

// Watched is a read cache of the rollout records, fed by a watch of their
// bucket: Get answers from the last revision the watch delivered, with no
// round trip to NATS. A record holds every pod of its rollout, so a read
// costs as much as the rollout is large; patch-pod and verify check every
// step of every pod against it, and the watch brings each revision once
// instead of once per check. A key the watch has not shown yet (before it
// has delivered the bucket's values, or written since) is read through.
// Like an informer's cache it may lag a write by the watch's delay:
// whoever refuses on what it read here reads the record again (Fresh).
// Its watch also feeds the process's other watchers of the records
// (Watch), so each revision crosses the connection once per process.
type Watched struct {
	live *KV
	mu   sync.RWMutex
	vals map[string]watchedValue
	// watchers are called with each value the watch brings (Watch).
	watchers map[*func(key string, value []byte)]bool
	// synced is closed once the watch has delivered every value the
	// bucket held.
	synced chan struct{}
	// through counts the reads that went to the bucket.
	through atomic.Int64
}

type watchedValue struct {
	rev   uint64
	value []byte
}

// NewWatched is a cache of live's bucket; Run feeds it.
func NewWatched(live *KV) *Watched {
	return &Watched{live: live, vals: map[string]watchedValue{}, synced: make(chan struct{})}
}

// Get returns key's value and revision as last watched, or as read from
// the bucket when the watch has not shown it; a missing key is (nil, 0, nil).
func (w *Watched) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	w.mu.RLock()
	v, ok := w.vals[key]
	w.mu.RUnlock()
	if ok {
		return v.value, v.rev, nil
	}
	return w.Fresh(ctx, key)
}

// Fresh reads key from the bucket, past the cache.
func (w *Watched) Fresh(ctx context.Context, key string) ([]byte, uint64, error) {
	w.through.Add(1)
	return w.live.Get(ctx, key)
}

// ReadsThrough counts the reads that went to the bucket (Fresh, and Get
// of a key the watch had not shown).
func (w *Watched) ReadsThrough() int64 { return w.through.Load() }

// Synced is closed once the watch has delivered the bucket's values.
func (w *Watched) Synced() <-chan struct{} {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.synced
}

// Run watches the bucket until ctx ends; it returns an error when the
// watch cannot start or ends by itself, and the cache is then emptied (its
// reads go through) until Run is called again.
func (w *Watched) Run(ctx context.Context) error {
	defer w.reset()
	kv, err := w.live.bucket(ctx)
	if err != nil {
		return err
	}
	wt, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("bus: watch KV: %w", err)
	}
	defer func() { _ = wt.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-wt.Updates():
			if !ok {
				return errors.New("bus: KV watch ended")
			}
			w.apply(e)
		}
	}
}

// Watch calls fn with each value the cache's watch brings from now on
// (deletes left out), once the cache holds it, so what fn wakes reads that
// value here; it returns when ctx ends. It is KV.Watch without a watch of
// its own: the values already held are not replayed.
func (w *Watched) Watch(ctx context.Context, fn func(key string, value []byte)) error {
	defer w.register(fn)()
	<-ctx.Done()
	return nil
}

// register adds fn to the watchers until the returned func is called.
func (w *Watched) register(fn func(key string, value []byte)) (unregister func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watchers == nil {
		w.watchers = map[*func(string, []byte)]bool{}
	}
	w.watchers[&fn] = true
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.watchers, &fn)
	}
}

// apply takes one watch update in, then hands a new value to the
// watchers: nil marks the end of the initial values.
func (w *Watched) apply(e jetstream.KeyValueEntry) {
	for _, fn := range w.store(e) {
		fn(e.Key(), e.Value())
	}
}

// store takes e into the cache; the watchers to hand it to when it is a
// new value.
func (w *Watched) store(e jetstream.KeyValueEntry) []func(string, []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case e == nil:
		select {
		case <-w.synced:
		default:
			close(w.synced)
		}
	case e.Operation() != jetstream.KeyValuePut:
		delete(w.vals, e.Key())
	case e.Revision() > w.vals[e.Key()].rev:
		w.vals[e.Key()] = watchedValue{rev: e.Revision(), value: e.Value()}
		fns := make([]func(string, []byte), 0, len(w.watchers))
		for fn := range w.watchers {
			fns = append(fns, *fn)
		}
		return fns
	}
	return nil
}

func (w *Watched) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.vals, w.synced = map[string]watchedValue{}, make(chan struct{})
}
