// Package notify tells waiters when something they wait for changed: a
// watch (an informer's handler, a KV watch) wakes the key, and each waiter
// of it reads the current state again. It carries no state of its own:
// the wake-up only says "look again".
package notify

import "sync"

// Keys are waiters by key. The zero value is ready to use.
type Keys struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]bool
}

// Changed returns a channel closed at the next Wake of key, and a func to
// stop waiting. Ask before reading, so a change in between is not missed.
func (k *Keys) Changed(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.waiters == nil {
		k.waiters = map[string]map[chan struct{}]bool{}
	}
	if k.waiters[key] == nil {
		k.waiters[key] = map[chan struct{}]bool{}
	}
	k.waiters[key][ch] = true
	return ch, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.waiters[key][ch] {
			delete(k.waiters[key], ch)
			close(ch)
		}
	}
}

// Wake wakes the waiters of key.
func (k *Keys) Wake(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for ch := range k.waiters[key] {
		close(ch)
	}
	delete(k.waiters, key)
}
