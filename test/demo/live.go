package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

// quiet are the pod watcher's events, too many to show line by line.
var quiet = map[string]bool{events.PodUpdated: true, events.ContainerRestarted: true}

// tail prints the chain's events as they are stored, until stop.
func (sh *shop) tail(ctx context.Context) (done <-chan struct{}, stop func()) {
	if sh.kn != nil {
		return sh.tailKnative()
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		s, err := history.Open(ctx, sh.s.Bus.JetStream(), sh.s.Bus.Config().Stream)
		if err != nil {
			fmt.Fprintln(sh.out, "  (tail:", err, ")")
			return
		}
		hidden := 0
		_ = s.Read(ctx, history.Query{New: true, Follow: true}, func(r history.Record) error {
			if r.Err == nil && quiet[r.Event.Type()] {
				hidden++
				return nil
			}
			fmt.Fprintln(sh.out, "  "+history.Line(r, time.Local))
			return nil
		})
		fmt.Fprintf(sh.out, "  (%d pod.updated / container.restarted events from the pod watcher not shown)\n", hidden)
	}()
	return ch, cancel
}

// waitRollouts waits for the rollout of both workloads to complete.
func (sh *shop) waitRollouts(ctx context.Context, within time.Duration) ([]events.RolloutData, error) {
	if sh.kn != nil {
		return sh.waitKnative(ctx, within)
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	s, err := history.Open(ctx, sh.s.Bus.JetStream(), sh.s.Bus.Config().Stream)
	if err != nil {
		return nil, err
	}
	var done []events.RolloutData
	errEnough := errors.New("both done")
	q := history.Query{Filter: history.Filter{Types: []string{events.Short(events.RolloutCompleted), events.Short(events.RolloutHalted)}}, Follow: true}
	err = s.Read(ctx, q, func(r history.Record) error {
		d, err := events.As[events.RolloutData](r.Event)
		if err != nil || d.Workload.Namespace != shopNS {
			return nil
		}
		if r.Event.Type() == events.RolloutHalted {
			return fmt.Errorf("rollout of %s halted: %s: %s", d.Workload, d.Reason, d.Message)
		}
		done = append(done, d)
		if len(done) == 2 {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		return done, nil
	}
	if err == nil {
		err = fmt.Errorf("the rollouts did not complete within %s", within)
	}
	return done, err
}
