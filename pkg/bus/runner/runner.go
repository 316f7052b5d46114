package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/metrics"
)

// Options tune a runner.
type Options struct {
	// Workers is how many inputs of one function are handled at once.
	Workers int
	// Log receives one line per settled failure, with the event id.
	Log *slog.Logger
	// Metrics, when set, count events and settlements.
	Metrics *metrics.Metrics
	// Pinned names the functions whose consumer delivers to one replica
	// at a time (bus.ConsumerSpec.Pinned).
	Pinned map[string]bool

	// beforeAck runs between publishing outputs and acking (tests simulate a crash there).
	beforeAck func(fn string) bool
}

// Runner runs functions against a bus.
type Runner struct {
	bus   *bus.Bus
	fns   []Function
	opts  Options
	ready atomic.Bool
	// budget counts failures apart from "not yet" answers.
	budget *budget
}

// New returns a runner for fns.
func New(b *bus.Bus, opts Options, fns ...Function) *Runner {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Runner{bus: b, fns: fns, opts: opts, budget: newBudget(b.Config(), nil)}
}

// Specs returns the consumer of each function, for bus setup.
func Specs(fns ...Function) []bus.ConsumerSpec { return PinnedSpecs(nil, fns...) }

// PinnedSpecs is Specs, the functions named in pinned with a consumer
// that delivers to one replica at a time.
func PinnedSpecs(pinned map[string]bool, fns ...Function) []bus.ConsumerSpec {
	specs := make([]bus.ConsumerSpec, 0, len(fns))
	for _, f := range fns {
		specs = append(specs, bus.ConsumerSpec{Name: f.Name(), Types: f.Types(), Pinned: pinned[f.Name()]})
	}
	return specs
}

// Ready reports whether every function is pulling from its consumer.
func (r *Runner) Ready() bool { return r.ready.Load() }

// Run sets up the consumers and handles events until ctx is done; then it
// stops pulling, lets handlers in flight finish and settle, and returns.
func (r *Runner) Run(ctx context.Context) error {
	if err := r.bus.EnsureConsumers(ctx, PinnedSpecs(r.opts.Pinned, r.fns...)...); err != nil {
		return err
	}
	failures, err := r.bus.Failures(ctx)
	if err != nil {
		return err
	}
	r.budget = newBudget(r.bus.Config(), failures)
	var iters []jetstream.MessagesContext
	for _, f := range r.fns {
		c, err := r.bus.Consumer(ctx, f.Name())
		if err != nil {
			stopAll(iters)
			return err
		}
		it, err := c.Messages(pullOpts(c, r.opts.Workers)...)
		if err != nil {
			stopAll(iters)
			return fmt.Errorf("runner: pull %s: %w", f.Name(), err)
		}
		iters = append(iters, it)
	}
	var wg sync.WaitGroup
	for i, f := range r.fns {
		for range r.opts.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.work(ctx, f, iters[i])
			}()
		}
	}
	r.ready.Store(true)
	<-ctx.Done()
	r.ready.Store(false)
	stopAll(iters)
	wg.Wait()
	return nil
}

// pullOpts are the options of a function's pull. A pinned consumer (one
// with priority groups, however it was set up) is pulled in its group,
// with pulls that expire well within its PinnedTTL: the replica it is
// pinned to asks again often enough to keep the pin while idle, and
// loses it soon after it stops.
func pullOpts(c jetstream.Consumer, workers int) []jetstream.PullMessagesOpt {
	opts := []jetstream.PullMessagesOpt{jetstream.PullMaxMessages(workers * 2)}
	cfg := c.CachedInfo().Config
	if len(cfg.PriorityGroups) == 0 {
		return opts
	}
	return append(opts, jetstream.PullPriorityGroup(cfg.PriorityGroups[0]),
		jetstream.PullExpiry(max(cfg.PinnedTTL/3, time.Second)))
}

func stopAll(iters []jetstream.MessagesContext) {
	for _, it := range iters {
		it.Stop()
	}
}

// work handles messages of one function until its iterator is stopped.
// Handlers run on a context that outlives ctx, so shutdown lets them finish.
func (r *Runner) work(ctx context.Context, f Function, it jetstream.MessagesContext) {
	base := context.WithoutCancel(ctx)
	for {
		msg, err := it.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.opts.Log.Warn("pull failed", "function", f.Name(), "err", err)
			time.Sleep(time.Second)
			continue
		}
		r.process(base, f, msg)
	}
}
