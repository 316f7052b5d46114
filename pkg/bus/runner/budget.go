package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// budget keeps the two limits of a message apart: RetryLimit counts its
// failures, LaterLimit its "not yet" answers. JetStream's NumDelivered counts
// every delivery, so failures are counted on the side (bus.Failures, shared
// by every replica and surviving a restart) and the "not yet" answers are
// the deliveries that were not failures.
type budget struct {
	cfg      bus.Config
	failures *bus.Failures // nil: counted in memory only

	mu  sync.Mutex
	mem map[string]int // fallback when the bucket cannot be reached
}

// memCap bounds the in-memory fallback; it is cleared when full (the bucket
// is the real record, this only covers its outages).
const memCap = 10000

func newBudget(cfg bus.Config, f *bus.Failures) *budget {
	return &budget{cfg: cfg, failures: f, mem: map[string]int{}}
}

// verdict turns a Retry or Later settlement into Fail when the message has
// used up the budget of its kind; other kinds pass through.
func (b *budget) verdict(ctx context.Context, function string, seq, delivered uint64, kind settle.Kind, err error) (settle.Kind, error) {
	switch kind {
	case settle.Retry:
		n := b.fail(ctx, function, seq)
		if n >= b.cfg.RetryLimit {
			return settle.Fail, fmt.Errorf("gave up after %d failed deliveries (of %d): %w", n, delivered, err)
		}
	case settle.Later:
		if delivered < uint64(b.cfg.LaterLimit) {
			return kind, err // cannot be over the limit: nothing to look up
		}
		waits := delivered - uint64(b.count(ctx, function, seq))
		if waits >= uint64(b.cfg.LaterLimit) {
			return settle.Fail, fmt.Errorf("still not ready after %d deliveries: %w", waits, err)
		}
	}
	return kind, err
}

// fail records one failure and returns the message's failures so far.
func (b *budget) fail(ctx context.Context, function string, seq uint64) int {
	key := fmt.Sprintf("%s.%d", function, seq)
	b.mu.Lock()
	if len(b.mem) >= memCap {
		clear(b.mem)
	}
	b.mem[key]++
	mem := b.mem[key]
	b.mu.Unlock()
	if b.failures == nil {
		return mem
	}
	n, err := b.failures.Add(ctx, function, seq)
	if err != nil {
		return mem
	}
	return max(n, mem)
}

// count returns the message's failures so far.
func (b *budget) count(ctx context.Context, function string, seq uint64) int {
	key := fmt.Sprintf("%s.%d", function, seq)
	b.mu.Lock()
	mem := b.mem[key]
	b.mu.Unlock()
	if b.failures == nil {
		return mem
	}
	n, err := b.failures.Count(ctx, function, seq)
	if err != nil {
		return mem
	}
	return max(n, mem)
}

// forget drops the in-memory count of a settled message (the bucket's
// entry expires by itself).
func (b *budget) forget(function string, seq uint64) {
	b.mu.Lock()
	delete(b.mem, fmt.Sprintf("%s.%d", function, seq))
	b.mu.Unlock()
}
