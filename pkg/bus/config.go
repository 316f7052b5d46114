package bus

import (
	"strings"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Config describes the stream, its consumers' timing and the KV bucket.
type Config struct {
	// Stream is the JetStream stream name.
	Stream string
	// Prefix is the first token of every subject.
	Prefix string
	// Replicas is 1 for a single server, 3 for a production cluster.
	Replicas int
	// MemoryStorage keeps the stream in memory (benchmarks); default is file.
	MemoryStorage bool
	// MaxAge bounds how long events are kept for tail, trace and replay.
	MaxAge time.Duration
	// AckWait is how long a delivered message may stay unsettled.
	AckWait time.Duration
	// Backoff is the delay before retry n (the last entry repeats).
	Backoff []time.Duration
	// RetryLimit is how many failed deliveries a message gets before it is
	// dead-lettered. Only failures count (see Failures), not the deliveries
	// that were answered "not yet".
	RetryLimit int
	// LaterLimit bounds "not yet" redeliveries (deliveries that were not
	// failures), a guard against a handler that never makes up its mind.
	LaterLimit int
	// MaxAckPending bounds unsettled messages per consumer. A "not yet"
	// answer (settle.NotYet) keeps its message unsettled until it comes
	// back, so a function parks one message per pod it waits on (verify's
	// timer: every pod in flight); at the bound the consumer delivers
	// nothing new until a parked one comes back. It must exceed the pods
	// in flight at once.
	MaxAckPending int
	// PinnedTTL is how long a pinned consumer (ConsumerSpec.Pinned) keeps
	// delivering to a replica that has stopped asking for messages before
	// it picks another: how soon a live replica takes over from a dead one.
	PinnedTTL time.Duration
	// KVBucket holds rollout progress.
	KVBucket string
}

// DefaultConfig is the configuration `inplace run` uses unless told otherwise.
func DefaultConfig() Config {
	return Config{
		Stream:        "INPLACE",
		Prefix:        "inplace",
		Replicas:      1,
		MaxAge:        7 * 24 * time.Hour,
		AckWait:       30 * time.Second,
		Backoff:       []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute},
		RetryLimit:    10,
		LaterLimit:    2000,
		MaxAckPending: 65536,
		PinnedTTL:     10 * time.Second,
		KVBucket:      "inplace-rollouts",
	}
}

// BackoffFor returns the delay before redelivering a message delivered n times.
func (c Config) BackoffFor(n uint64) time.Duration {
	if len(c.Backoff) == 0 {
		return time.Second
	}
	i := int(n) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(c.Backoff) {
		i = len(c.Backoff) - 1
	}
	return c.Backoff[i]
}

// DuplicateWindow is how long the stream remembers ids: at least as long as
// an input can keep being redelivered (RetryLimit × (AckWait + max backoff)),
// so the outputs of a redelivered input are always recognised.
func (c Config) DuplicateWindow() time.Duration {
	var maxBackoff time.Duration
	for _, b := range c.Backoff {
		maxBackoff = max(maxBackoff, b)
	}
	w := time.Duration(c.RetryLimit) * (c.AckWait + maxBackoff)
	if w > c.MaxAge {
		w = c.MaxAge
	}
	return max(w, 2*time.Minute)
}

// Subject is the subject an event of type typ is published on:
// "inplace.image.pushed" for dev.inplace.image.pushed.v1.
func (c Config) Subject(typ string) string {
	return c.Prefix + "." + strings.ReplaceAll(events.Short(typ), "*", "_")
}

// DLQSubject is where a function's dead letters go.
func (c Config) DLQSubject(function string) string {
	return c.Prefix + ".dlq." + function
}

// AllSubjects is the stream's subject filter.
func (c Config) AllSubjects() string { return c.Prefix + ".>" }
