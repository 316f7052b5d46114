package app

import (
	"context"
	"errors"
	"sync"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
)

// readiness is what /readyz asks.
type readiness interface{ Ready() bool }

// Runners run the functions of a process, one runner per bus identity, so
// each function pulls, acks and publishes as itself.
type Runners []*runner.Runner

// runners groups fns by the bus of their identity.
func runners(l *links, opts runner.Options, fns []runner.Function) Runners {
	var order []*bus.Bus
	by := map[*bus.Bus][]runner.Function{}
	for _, f := range fns {
		b := l.bus(f.Name())
		if _, ok := by[b]; !ok {
			order = append(order, b)
		}
		by[b] = append(by[b], f)
	}
	rs := make(Runners, 0, len(order))
	for _, b := range order {
		rs = append(rs, runner.New(b, opts, by[b]...))
	}
	return rs
}

// Ready reports whether every function pulls from its consumer.
func (rs Runners) Ready() bool {
	for _, r := range rs {
		if !r.Ready() {
			return false
		}
	}
	return true
}

// Run runs every runner until ctx ends; the first to fail stops the rest.
func (rs Runners) Run(ctx context.Context) error {
	if len(rs) == 0 { // the receiver alone: nothing to pull, run until the end
		<-ctx.Done()
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = r.Run(ctx); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
