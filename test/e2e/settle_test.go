package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/test/world"
)

// settled waits until every function has handled every event on the
// stream: each durable consumer has delivered up to the stream's last
// message and has nothing pending or unacknowledged, twice in a row with
// the stream unchanged (a handler's outputs would have moved it).
func (e *env) settled(within time.Duration) {
	e.t.Helper()
	var last, stable uint64
	err := world.Eventually(e.t.Context(), within, "every consumer idle", func(ctx context.Context) (bool, error) {
		seq, idle, err := e.idle(ctx)
		if err != nil || !idle {
			stable = 0
			return false, err
		}
		if seq == last {
			stable++
		} else {
			last, stable = seq, 0
		}
		return stable >= 2, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// idle reports the stream's last sequence and whether every consumer has
// taken it and settled all it took.
func (e *env) idle(ctx context.Context) (uint64, bool, error) {
	b := e.s.Bus
	s, err := b.JetStream().Stream(ctx, b.Config().Stream)
	if err != nil {
		return 0, false, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, spec := range app.Consumers {
		c, err := s.Consumer(ctx, spec.Name)
		if err != nil {
			return 0, false, fmt.Errorf("consumer %s: %w", spec.Name, err)
		}
		ci, err := c.Info(ctx)
		if err != nil {
			return 0, false, err
		}
		if ci.NumPending > 0 || ci.NumAckPending > 0 || ci.NumRedelivered > 0 {
			return info.State.LastSeq, false, nil
		}
	}
	return info.State.LastSeq, true, nil
}

// deadLetters returns the dead letters of a function: the original
// event's id → the reason.
func (e *env) deadLetters(function string) map[string]string {
	e.t.Helper()
	b := e.s.Bus
	ctx := e.t.Context()
	c, err := b.JetStream().OrderedConsumer(ctx, b.Config().Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{b.Config().DLQSubject(function)}})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for {
		batch, err := c.FetchNoWait(500)
		if err != nil {
			e.t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			ev, err := bus.Decode(ctx, m.Subject(), m.Headers(), m.Data())
			if err != nil {
				e.t.Fatal(err)
			}
			out[ev.ID()] = m.Headers().Get(bus.HeaderDLQReason)
		}
		if n == 0 {
			return out
		}
	}
}

// counter reads one series of the process's /metrics (0 when absent).
func (e *env) counter(series string) float64 {
	e.t.Helper()
	resp, err := http.Get("http://" + e.s.HTTPAddr + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				e.t.Fatalf("metric %s: %v", line, err)
			}
			return f
		}
	}
	return 0
}
