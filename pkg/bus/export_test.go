package bus

import "time"

// SetClock sets the clock a holder stamps and checks expiries with.
func SetClock(l *Leases, now func() time.Time) { l.now = now }

// Held is key's revision in w's copy (0: not held).
func Held(w *Watched, key string) uint64 {
	v, _ := w.held(key)
	return v.rev
}
