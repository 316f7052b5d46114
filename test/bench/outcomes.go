package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

// outcome is a rollout's end as the bus announced it.
type outcome struct {
	At     time.Time // when the benchmark received it
	Halted bool
	Data   events.RolloutData
}

// outcomes follows rollout.completed and rollout.halted on the project's
// bus (as the operator identity): the in-place clock stops when one
// arrives.
type outcomes struct {
	nc  *nats.Conn
	sub *nats.Subscription
	js  jetstream.JetStream

	mu   sync.Mutex
	seen []outcome
	wake chan struct{}
}

func followOutcomes(p *project) (*outcomes, error) {
	opts, err := busauth.Dial(p.creds, busauth.Operator)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(p.natsURL, append(opts, nats.Name("inplace-bench"))...)
	if err != nil {
		return nil, fmt.Errorf("connect to the project's NATS: %w", err)
	}
	o := &outcomes{nc: nc, wake: make(chan struct{})}
	prefix := bus.DefaultConfig().Prefix
	o.sub, err = nc.Subscribe(prefix+".rollout.*", o.receive)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if o.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, err
	}
	return o, nc.Flush()
}

func (o *outcomes) receive(m *nats.Msg) {
	typ := m.Header.Get("ce-type")
	if typ != events.RolloutCompleted && typ != events.RolloutHalted {
		return
	}
	var d events.RolloutData
	if json.Unmarshal(m.Data, &d) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, outcome{At: time.Now(), Halted: typ == events.RolloutHalted, Data: d})
	close(o.wake)
	o.wake = make(chan struct{})
}

// wait returns the first outcome for workload ("Kind/ns/name") whose
// target is digest.
func (o *outcomes) wait(ctx context.Context, workload, digest string) (outcome, error) {
	for {
		o.mu.Lock()
		for _, x := range o.seen {
			if x.Data.Workload.String() == workload && strings.HasSuffix(x.Data.Target, digest) {
				o.mu.Unlock()
				return x, nil
			}
		}
		wake := o.wake
		o.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return outcome{}, fmt.Errorf("rollout of %s to %s: no rollout.completed: %w", workload, digest, ctx.Err())
		}
	}
}

// stamps reads from the stream when each pod of one rollout (its upgrade
// id; every rollout when empty) was planned, pre-pulled, patched and
// verified, by pod (namespace/name).
//
// Seen is the first pod.updated the stream stored of the pod Ready on
// digest (the pod watcher's side of Ready → verified).
func (o *outcomes) stamps(ctx context.Context, upgradeID, digest string, since time.Time) (map[string]podStamps, error) {
	s, err := history.Open(ctx, o.js, bus.DefaultConfig().Stream)
	if err != nil {
		return nil, err
	}
	out := map[string]podStamps{}
	q := history.Query{Since: since, Filter: history.Filter{UpgradeID: upgradeID, Types: []string{
		events.Short(events.UpgradePlanned), events.Short(events.ImagePrepulled),
		events.Short(events.PodPatched), events.Short(events.UpgradeSucceeded), events.Short(events.PodUpdated)}}}
	err = s.Read(ctx, q, func(r history.Record) error {
		st := out[r.Event.Subject()]
		switch r.Event.Type() {
		case events.UpgradePlanned:
			st.Planned = earliest(st.Planned, r.Stored)
		case events.ImagePrepulled:
			st.Prepulled = earliest(st.Prepulled, r.Stored)
		case events.PodPatched:
			st.Patched = earliest(st.Patched, r.Stored)
		case events.UpgradeSucceeded:
			st.Verified = earliest(st.Verified, r.Stored)
		case events.PodUpdated:
			if !st.Seen.IsZero() {
				return nil
			}
			if d, err := events.As[events.PodUpdatedData](r.Event); err == nil && readyOn(&d.Pod, digest) {
				st.Seen = r.Stored
			}
		}
		out[r.Event.Subject()] = st
		return nil
	})
	return out, err
}

// settle waits until no consumer of the project's stream has a delivery
// awaiting its ack, verify's safety-net timers among them (a pod.patched
// answered "not yet" comes back up to verify's Recheck later, 15 s, even
// when the pod.updated of its landing was reported meanwhile), so that the
// next run does not pay for this one's; at most limit. It returns how long
// it waited and, past limit, what was still awaited.
func (o *outcomes) settle(ctx context.Context, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	s, err := o.js.Stream(ctx, bus.DefaultConfig().Stream)
	if err != nil {
		return 0, fmt.Errorf("the project's stream: %w", err)
	}
	for {
		var busy []string
		list := s.ListConsumers(ctx)
		for ci := range list.Info() {
			if ci.NumAckPending > 0 {
				busy = append(busy, fmt.Sprintf("%s %d", ci.Name, ci.NumAckPending))
			}
		}
		if err := list.Err(); err != nil {
			return time.Since(start), fmt.Errorf("the project's consumers: %w", err)
		}
		if len(busy) == 0 {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("deliveries still awaiting their ack after %s: %s", limit, strings.Join(busy, ", "))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (o *outcomes) close() {
	if o != nil && o.nc != nil {
		o.nc.Close()
	}
}

// errHalted says why a rollout halted.
func errHalted(o outcome) error {
	return fmt.Errorf("rollout halted: %s %s (counts %+v)", o.Data.Reason, o.Data.Message, o.Data.Counts)
}
