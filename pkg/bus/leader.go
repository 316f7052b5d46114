package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Leader runs a singleton's work on one replica at a time: the replica
// that holds the lease Name (a key of the lease bucket, LeaderKey) does
// it, and renews the lease every Hold/3. The others look at the lease
// every Hold/3 (sooner when it expires sooner): a holder killed without a
// word is replaced once its lease expires, Hold after its last renewal; a
// holder that stops releases the lease and is replaced at the others'
// next look. A holder that cannot renew in time stops the work before its
// lease expires.
//
// The work of a singleton run so must be safe twice (two holders may
// briefly overlap across a partition) and level-triggered: the holder
// that takes over starts from the current state, not from what the last
// one saw.
type Leader struct {
	Leases *Leases
	// Name is the singleton's; the lease key is LeaderKey(Name).
	Name string
	// Hold is how long a lease lasts unless renewed (at least 3s).
	Hold time.Duration
	Log  *slog.Logger
}

// LeaderKey is the lease key of a singleton: under its name, as each
// identity's leases are (busauth: an identity takes only keys under its
// own name).
func LeaderKey(name string) string { return name + ".leader" }

// Run calls lead each time this replica takes the lease, with a context
// that ends when the lease is lost or ctx ends, and returns when ctx ends
// (the lease released).
func (ld Leader) Run(ctx context.Context, lead func(context.Context)) {
	hold := max(ld.Hold, 3*time.Second)
	log := ld.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key := LeaderKey(ld.Name)
	for ctx.Err() == nil {
		rev, wait, err := ld.Leases.claim(ctx, key, hold)
		if err != nil && ctx.Err() == nil {
			log.Warn("leader: reading the lease failed; trying again", "lease", key, "err", err)
			wait = hold / 3
		}
		if rev == 0 {
			sleep(ctx, min(wait, hold/3))
			continue
		}
		log.Info("leader: took the lease", "lease", key)
		ld.Leases.keep(ctx, key, hold, rev, lead, log)
	}
}

// claim takes the lease key when nobody holds it, its holder's time is
// over or it is this replica's: its revision; otherwise 0 and how long
// until the holder's time is over.
func (l *Leases) claim(ctx context.Context, key string, hold time.Duration) (rev uint64, wait time.Duration, err error) {
	val, err := json.Marshal(lease{Holder: l.holder, Expires: l.now().Add(hold)})
	if err != nil {
		return 0, 0, err
	}
	e, err := l.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err = l.kv.Create(ctx, key, val)
	case err != nil:
		return 0, 0, fmt.Errorf("bus: read lease %s: %w", key, err)
	default:
		var cur lease
		if json.Unmarshal(e.Value(), &cur) == nil && cur.Holder != l.holder && l.now().Before(cur.Expires) {
			return 0, cur.Expires.Sub(l.now()), nil
		}
		rev, err = l.kv.Update(ctx, key, val, e.Revision())
	}
	if isConflict(err) {
		return 0, 0, nil // another replica took it just now: read its time
	}
	if err != nil {
		return 0, 0, fmt.Errorf("bus: take lease %s: %w", key, err)
	}
	return rev, 0, nil
}

// keep runs lead while the lease (at rev) is renewed; it releases the
// lease when ctx ends or lead returns.
func (l *Leases) keep(ctx context.Context, key string, hold time.Duration, rev uint64, lead func(context.Context), log *slog.Logger) {
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(lctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	expires := l.now().Add(hold)
	tick := time.NewTicker(hold / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.release(ctx, key, rev)
			return
		case <-done:
			l.release(ctx, key, rev)
			return
		case <-tick.C:
		}
		next, err := l.renew(ctx, key, hold, rev)
		switch {
		case err == nil:
			rev, expires = next, l.now().Add(hold)
		case isConflict(err):
			log.Warn("leader: lost the lease to another replica", "lease", key)
			return
		case ctx.Err() != nil:
		case !l.now().Add(hold / 3).Before(expires):
			log.Warn("leader: could not renew the lease in time; stopping", "lease", key, "err", err)
			return
		default:
			log.Warn("leader: renewing the lease failed; trying again", "lease", key, "err", err)
		}
	}
}

func (l *Leases) renew(ctx context.Context, key string, hold time.Duration, rev uint64) (uint64, error) {
	val, err := json.Marshal(lease{Holder: l.holder, Expires: l.now().Add(hold)})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, hold/3)
	defer cancel()
	return l.kv.Update(ctx, key, val, rev)
}

// release deletes the lease if it is still at rev (this replica's), with a
// fresh context: ctx may be over.
func (l *Leases) release(ctx context.Context, key string, rev uint64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = l.kv.Delete(ctx, key, jetstream.LastRevision(rev))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
