package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/world"
)

var errUnavailable = errors.New("the server is currently unable to handle the request (503)")

// A message that waited more times than the retry limit, then met one
// transient failure, is retried, not dead-lettered: waits and failures have
// budgets of their own.
func TestWaitsDoNotUseUpTheRetryBudget(t *testing.T) {
	b := bustest.New(t, nil)
	cfg := bustest.Config() // RetryLimit 4
	f := &fn{name: "verify", types: []string{events.ImagePushed},
		handle: func(_ context.Context, _ cloudevents.Event, n int) ([]cloudevents.Event, error) {
			switch {
			case n <= cfg.RetryLimit+2:
				return nil, settle.NotYet(20*time.Millisecond, "the kubelet has not restarted the container")
			case n == cfg.RetryLimit+3:
				return nil, errUnavailable
			}
			return nil, nil
		}}
	start(t, b, runner.Options{}, f)
	if err := b.Publish(t.Context(), pushedEvent(t, "w-1")); err != nil {
		t.Fatal(err)
	}
	want := cfg.RetryLimit + 4
	world.Until(t, 20*time.Second, "the delivery after the failure", func() bool { return f.count() >= want || len(dlq(t, b, "verify")) > 0 })
	if letters := dlq(t, b, "verify"); len(letters) > 0 {
		t.Fatalf("dead-lettered after %d deliveries: %s", f.count(), letters[0].Headers().Get(bus.HeaderDLQReason))
	}
	settled(t, b, "verify")
	if got := f.count(); got != want {
		t.Errorf("handled %d times; want %d (acked on the last)", got, want)
	}
}

// "Not yet" answers have a limit too: a handler that never makes up its
// mind is dead-lettered with the reason after LaterLimit deliveries.
func TestNotYetHasALimit(t *testing.T) {
	cfg := bustest.Config()
	cfg.LaterLimit = 3
	b := bustest.New(t, &cfg)
	f := &fn{name: "verify", types: []string{events.ImagePushed},
		handle: func(context.Context, cloudevents.Event, int) ([]cloudevents.Event, error) {
			return nil, settle.NotYet(10*time.Millisecond, "still waiting for the kubelet")
		}}
	start(t, b, runner.Options{}, f)
	if err := b.Publish(t.Context(), pushedEvent(t, "l-1")); err != nil {
		t.Fatal(err)
	}
	var letters []jetstream.Msg
	world.Until(t, 20*time.Second, "a dead letter", func() bool { letters = dlq(t, b, "verify"); return len(letters) > 0 })
	if r := letters[0].Headers().Get(bus.HeaderDLQReason); !strings.Contains(r, "still not ready after 3 deliveries") ||
		!strings.Contains(r, "still waiting for the kubelet") {
		t.Errorf("reason = %q", r)
	}
	settled(t, b, "verify")
	if got := f.count(); got != cfg.LaterLimit {
		t.Errorf("handled %d times; want LaterLimit %d", got, cfg.LaterLimit)
	}
}

// Failures are counted in the bus, not in one process: a message that
// failed twice in one runner has two failures left in the next (after a
// crash, or on another replica), however many times it waited.
func TestFailureCountSurvivesARestart(t *testing.T) {
	cfg := bustest.Config() // RetryLimit 4
	cfg.Backoff = []time.Duration{2 * time.Second}
	b := bustest.New(t, &cfg)
	const waits = 3
	f := &fn{name: "patch-pod", types: []string{events.ImagePushed},
		handle: func(_ context.Context, _ cloudevents.Event, n int) ([]cloudevents.Event, error) {
			if n <= waits {
				return nil, settle.NotYet(20*time.Millisecond, "grace period")
			}
			return nil, errUnavailable
		}}
	stop := start(t, b, runner.Options{}, f)
	if err := b.Publish(t.Context(), pushedEvent(t, "s-1")); err != nil {
		t.Fatal(err)
	}
	world.Until(t, 20*time.Second, "two failures", func() bool { return f.count() >= waits+2 })
	stop() // the next redelivery is 2s away

	start(t, b, runner.Options{}, f)
	var letters []jetstream.Msg
	world.Until(t, 30*time.Second, "a dead letter", func() bool { letters = dlq(t, b, "patch-pod"); return len(letters) > 0 })
	if got, want := f.count(), waits+cfg.RetryLimit; got != want {
		t.Errorf("handled %d times; want %d (%d waits, then RetryLimit failures across both runners)", got, want, waits)
	}
	if r := letters[0].Headers().Get(bus.HeaderDLQReason); !strings.Contains(r, "gave up after 4 failed deliveries") {
		t.Errorf("reason = %q", r)
	}
}
