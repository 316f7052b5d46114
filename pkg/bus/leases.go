package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Leases hold one pod at a time across the replicas of a function: before
// a delivery reads, decides and writes a pod, its replica takes the pod's
// lease, a key of its own in a KV bucket (function.podUID), created with
// expected revision 0 or updated with the revision it read; a replica that
// finds the lease held by another answers "not yet" and the message is
// redelivered. A lease carries its expiry: a replica killed while holding
// one leaves it to expire after Hold, and the next taker (on any replica)
// takes it over with a compare-and-swap on the revision it read. The
// bucket's TTL removes what nobody released.
type Leases struct {
	kv jetstream.KeyValue
	// Hold is how long a lease lasts unless released: the bus's AckWait,
	// past which the message would be redelivered anyway.
	Hold   time.Duration
	holder string
	now    func() time.Time
}

// ErrHeld: another holder has the lease and it has not expired.
var ErrHeld = errors.New("lease held by another replica")

// LeaseTaker takes a pod's lease for one replica of a function (Leases; a
// fake in unit tests); a pod held by another replica is ErrHeld.
type LeaseTaker interface {
	Take(ctx context.Context, function, uid string) (release func(), err error)
}

// heldRetry is how soon an input whose pod another replica holds comes
// back: a holder keeps it for one read-decide-write, milliseconds.
const heldRetry = 200 * time.Millisecond

// TakeLease takes the pod's lease through l (nothing to take when l is
// nil: no leases); a pod another replica holds is "not yet": the input
// comes back after heldRetry.
func TakeLease(ctx context.Context, l LeaseTaker, function, uid string) (func(), error) {
	if l == nil {
		return func() {}, nil
	}
	release, err := l.Take(ctx, function, uid)
	if errors.Is(err, ErrHeld) {
		return nil, settle.NotYet(heldRetry, "%v", err)
	}
	return release, err
}

// LeasesBucket names the bucket of pod leases.
func (c Config) LeasesBucket() string { return c.KVBucket + "-leases" }

// Leases opens (creating or updating) the lease bucket; an attached bus
// finds it.
func (b *Bus) Leases(ctx context.Context) (*Leases, error) {
	return leasesOn(ctx, b.js, b.cfg, b.attached)
}

// OpenLeases opens the lease bucket on nc without setting up the stream:
// for patch-pod and verify in Knative mode, where several pods of a
// function's Service take deliveries at once. find: only find the bucket
// (an identity that may not make it; the operator did).
func OpenLeases(ctx context.Context, nc *nats.Conn, cfg Config, find bool) (*Leases, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	return leasesOn(ctx, js, cfg, find)
}

func leasesOn(ctx context.Context, js jetstream.JetStream, cfg Config, find bool) (*Leases, error) {
	hold := max(cfg.AckWait, time.Second)
	var kv jetstream.KeyValue
	var err error
	if find {
		kv, err = js.KeyValue(ctx, cfg.LeasesBucket())
	} else {
		storage := jetstream.FileStorage
		if cfg.MemoryStorage {
			storage = jetstream.MemoryStorage
		}
		kv, err = createKV(ctx, js, jetstream.KeyValueConfig{
			Bucket:      cfg.LeasesBucket(),
			Description: "inplace: which replica of a function acts on a pod",
			History:     1,
			TTL:         2 * hold,
			Storage:     storage,
			Replicas:    max(cfg.Replicas, 1),
		})
	}
	if err != nil {
		return nil, fmt.Errorf("bus: KV %s: %w", cfg.LeasesBucket(), err)
	}
	return newLeases(kv, hold), nil
}

func newLeases(kv jetstream.KeyValue, hold time.Duration) *Leases {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	return &Leases{kv: kv, Hold: hold, holder: hex.EncodeToString(id), now: time.Now}
}

// takeOver takes key from the holder whose lease has expired (or from
// this holder): its revision; ErrHeld while another holds it.
func (l *Leases) takeOver(ctx context.Context, key string, val []byte) (uint64, error) {
	e, err := l.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound): // released meanwhile
		return l.kv.Create(ctx, key, val)
	case err != nil:
		return 0, fmt.Errorf("bus: read lease %s: %w", key, err)
	}
	var cur lease
	if json.Unmarshal(e.Value(), &cur) == nil && cur.Holder != l.holder && l.now().Before(cur.Expires) {
		return 0, fmt.Errorf("%w: %s until %s", ErrHeld, key, cur.Expires.Format(time.RFC3339))
	}
	return l.kv.Update(ctx, key, val, e.Revision())
}

// lease is the value of a lease key.
type lease struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// Take takes the lease of pod uid for function; ErrHeld when another
// holder has it. release gives it back (only if still ours). Most takes
// are a pod's first at a step, of a key nobody wrote: they create it in
// one request, and only a key that is there (held, or not yet expired) is
// read for its holder and expiry.
func (l *Leases) Take(ctx context.Context, function, uid string) (release func(), err error) {
	key := function + "." + uid
	val, err := json.Marshal(lease{Holder: l.holder, Expires: l.now().Add(l.Hold)})
	if err != nil {
		return nil, err
	}
	rev, err := l.kv.Create(ctx, key, val) // also over a released lease (its delete marker)
	if errors.Is(err, jetstream.ErrKeyExists) {
		rev, err = l.takeOver(ctx, key, val)
	}
	if isConflict(err) {
		return nil, fmt.Errorf("%w: %s (taken just now)", ErrHeld, key)
	}
	if err != nil {
		return nil, fmt.Errorf("bus: take lease %s: %w", key, err)
	}
	return func() {
		// A fresh context: the delivery's may be over; only our revision is deleted.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = l.kv.Delete(ctx, key, jetstream.LastRevision(rev))
	}, nil
}
