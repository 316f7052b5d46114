package kubelet

import "time"

// backoffs is client-go's flowcontrol.Backoff as the kubelet uses it (for
// crash loops and image pulls), over the simulation's clock: an entry
// doubles from initial to max on each failure and is forgotten after
// 2×max without one.
type backoffs struct {
	initial, max time.Duration
	entries      map[string]*backoffEntry
}

type backoffEntry struct {
	dur        time.Duration
	lastUpdate time.Time
}

func newBackoffs(t Timings) *backoffs {
	return &backoffs{initial: t.BackoffInitial, max: t.BackoffMax, entries: map[string]*backoffEntry{}}
}

func (b *backoffs) expired(e *backoffEntry, at time.Time) bool {
	return at.Sub(e.lastUpdate) > 2*b.max
}

// next records a failure of id at now (eventTime decides whether the
// previous window expired).
func (b *backoffs) next(id string, eventTime, now time.Time) {
	e, ok := b.entries[id]
	switch {
	case !ok || b.expired(e, eventTime):
		e = &backoffEntry{dur: b.initial}
		b.entries[id] = e
	default:
		e.dur = min(2*e.dur, b.max)
	}
	e.lastUpdate = now
}

// get is id's current back-off, zero when none.
func (b *backoffs) get(id string) time.Duration {
	if e, ok := b.entries[id]; ok {
		return e.dur
	}
	return 0
}

// inBackoffSince: now is within id's back-off counted from eventTime (a
// container's exit), the crash-loop check.
func (b *backoffs) inBackoffSince(id string, eventTime, now time.Time) bool {
	e, ok := b.entries[id]
	if !ok || b.expired(e, eventTime) {
		return false
	}
	return now.Sub(eventTime) < e.dur
}

// inBackoffSinceUpdate: now is within id's back-off counted from its last
// failure, the image pull check.
func (b *backoffs) inBackoffSinceUpdate(id string, now time.Time) bool {
	e, ok := b.entries[id]
	if !ok || b.expired(e, now) {
		return false
	}
	return now.Sub(e.lastUpdate) < e.dur
}
