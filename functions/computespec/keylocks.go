package computespec

import "sync"

// keyLocks are mutexes by key, made on first use (one per workload that
// had a rollout: few).
type keyLocks struct{ m sync.Map }

// lock locks key and returns its unlock.
func (l *keyLocks) lock(key string) func() {
	v, _ := l.m.LoadOrStore(key, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}
