// Package keylock serialises work per key inside one process: the
// deliveries that concern one pod (patch-pod, verify) or one workload
// (compute-spec's record commits and template syncs) run one at a time,
// while other keys run in parallel.
//
// A handler here answers its delivery synchronously (its result settles the
// message), so the work cannot be handed to a queue and picked up later as a
// controller's worker would; it waits for its key instead. Each key has its
// own lock (no buckets shared between keys, so holding one key never blocks
// another), made when first wanted and dropped when nobody holds or waits
// for it, so the set stays as small as the work in flight.
//
// Across replicas this is not enough and is not meant to be: the per-pod
// lease (pkg/bus) and the guarded writes are what hold there.
package keylock

import "sync"

// Locks is a set of mutexes by key. The zero value is ready to use.
type Locks struct {
	mu   sync.Mutex
	keys map[string]*lock
}

type lock struct {
	sync.Mutex
	users int // holders and waiters
}

// Lock waits until no one else holds key, holds it, and returns the
// function that releases it (to be called once).
func (l *Locks) Lock(key string) (unlock func()) {
	k := l.use(key)
	k.Lock()
	return func() {
		k.Unlock()
		l.drop(key, k)
	}
}

// TryLock holds key when no one else does, and returns the function that
// releases it (to be called once); ok is false, and nothing is held, when
// someone does: the caller does not wait.
func (l *Locks) TryLock(key string) (unlock func(), ok bool) {
	k := l.use(key)
	if !k.TryLock() {
		l.drop(key, k)
		return nil, false
	}
	return func() {
		k.Unlock()
		l.drop(key, k)
	}, true
}

// use counts a holder or waiter of key's lock, made when first wanted.
func (l *Locks) use(key string) *lock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = map[string]*lock{}
	}
	k := l.keys[key]
	if k == nil {
		k = &lock{}
		l.keys[key] = k
	}
	k.users++
	return k
}

// drop ends a use of key's lock k, and forgets k when nobody uses it.
func (l *Locks) drop(key string, k *lock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k.users--; k.users == 0 {
		delete(l.keys, key)
	}
}

// Len is the number of keys held or waited for.
func (l *Locks) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}
