package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/metrics"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/world"
)

// fn is a Function made of a closure that records each delivery time.
type fn struct {
	name   string
	types  []string
	handle func(ctx context.Context, e cloudevents.Event, n int) ([]cloudevents.Event, error)

	mu    sync.Mutex
	calls []time.Time
}

func (f *fn) Name() string    { return f.name }
func (f *fn) Types() []string { return f.types }
func (f *fn) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	f.mu.Lock()
	f.calls = append(f.calls, time.Now())
	n := len(f.calls)
	f.mu.Unlock()
	return f.handle(ctx, e, n)
}

func (f *fn) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fn) gaps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var g []time.Duration
	for i := 1; i < len(f.calls); i++ {
		g = append(g, f.calls[i].Sub(f.calls[i-1]))
	}
	return g
}

func pushedEvent(t *testing.T, id string) cloudevents.Event {
	t.Helper()
	e, err := events.New(id, events.ImagePushed, events.Source("test"), "r/a:1",
		events.ImagePushedData{Registry: "r", Repository: "a", Tag: "1", Origin: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// start runs fns on b until the test ends (or stop is called) and waits until ready.
func start(t *testing.T, b *bus.Bus, opts runner.Options, fns ...runner.Function) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := runner.New(b, opts, fns...)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	world.Until(t, 10*time.Second, "runner ready", r.Ready)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// settled waits until the function's consumer has settled for good every
// message it was given: all acked or terminated (its ack floor at the last
// delivery), none waiting for an ack or for a redelivery. After that the
// bus delivers none of them again.
func settled(t *testing.T, b *bus.Bus, function string) {
	t.Helper()
	world.Until(t, 20*time.Second, function+"'s deliveries settled", func() bool {
		c, err := b.Consumer(t.Context(), function)
		if err != nil {
			return false
		}
		ci, err := c.Info(t.Context())
		return err == nil && ci.Delivered.Stream > 0 && ci.AckFloor.Stream == ci.Delivered.Stream &&
			ci.NumAckPending == 0 && ci.NumRedelivered == 0 && ci.NumPending == 0
	})
}

// dlq reads the dead letters of a function from the stream.
func dlq(t *testing.T, b *bus.Bus, function string) []jetstream.Msg {
	t.Helper()
	c, err := b.JetStream().OrderedConsumer(t.Context(), b.Config().Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{b.Config().DLQSubject(function)},
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.FetchNoWait(100)
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for m := range batch.Messages() {
		out = append(out, m)
	}
	return out
}

func TestPermanentErrorIsTerminatedWithADeadLetter(t *testing.T) {
	b := bustest.New(t, nil)
	f := &fn{name: "compute-spec", types: []string{events.ImagePushed},
		handle: func(context.Context, cloudevents.Event, int) ([]cloudevents.Event, error) {
			return nil, settle.Permanentf("policy annotation %q: unknown kind", "semvr:minor")
		}}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	start(t, b, runner.Options{Metrics: m}, f)
	if err := b.Publish(t.Context(), pushedEvent(t, "p-1")); err != nil {
		t.Fatal(err)
	}
	var letters []jetstream.Msg
	world.Until(t, 10*time.Second, "a dead letter", func() bool { letters = dlq(t, b, "compute-spec"); return len(letters) > 0 })
	h := letters[0].Headers()
	if got := h.Get(bus.HeaderDLQReason); got != `policy annotation "semvr:minor": unknown kind` {
		t.Errorf("dead-letter reason = %q", got)
	}
	if h.Get("ce-id") != "p-1" || h.Get(bus.HeaderDLQSubject) != "inplace.image.pushed" {
		t.Errorf("dead letter is not a copy of the input: %v", h)
	}
	settled(t, b, "compute-spec")
	if got := f.count(); got != 1 {
		t.Errorf("handler called %d times; a terminated message must not come back", got)
	}
	if got := testutil.ToFloat64(m.Settled.WithLabelValues("compute-spec", "dead-letter")); got != 1 {
		t.Errorf("dead-letter settlements = %v", got)
	}
}

func TestRetryableErrorIsRedeliveredWithBackoffThenDeadLettered(t *testing.T) {
	b := bustest.New(t, nil)
	cfg := bustest.Config()
	f := &fn{name: "patch-pod", types: []string{events.ImagePushed},
		handle: func(context.Context, cloudevents.Event, int) ([]cloudevents.Event, error) {
			return nil, errors.New("the server is currently unable to handle the request")
		}}
	start(t, b, runner.Options{}, f)
	if err := b.Publish(t.Context(), pushedEvent(t, "r-1")); err != nil {
		t.Fatal(err)
	}
	var letters []jetstream.Msg
	world.Until(t, 20*time.Second, "dead letter after the retry limit", func() bool { letters = dlq(t, b, "patch-pod"); return len(letters) > 0 })
	if got := f.count(); got != cfg.RetryLimit {
		t.Errorf("delivered %d times; want RetryLimit %d", got, cfg.RetryLimit)
	}
	for i, g := range f.gaps() {
		if want := cfg.BackoffFor(uint64(i + 1)); g < want {
			t.Errorf("redelivery %d came after %s; backoff is %s", i+2, g, want)
		}
	}
	if r := letters[0].Headers().Get(bus.HeaderDLQReason); !strings.HasPrefix(r, "gave up after") {
		t.Errorf("reason = %q", r)
	}
}

func TestNotYetIsRedeliveredAfterItsDelay(t *testing.T) {
	b := bustest.New(t, nil)
	const wait = 700 * time.Millisecond
	f := &fn{name: "verify", types: []string{events.ImagePushed},
		handle: func(_ context.Context, _ cloudevents.Event, n int) ([]cloudevents.Event, error) {
			if n < 3 {
				return nil, settle.NotYet(wait, "kubelet has not restarted the container")
			}
			return nil, nil
		}}
	start(t, b, runner.Options{}, f)
	if err := b.Publish(t.Context(), pushedEvent(t, "n-1")); err != nil {
		t.Fatal(err)
	}
	world.Until(t, 10*time.Second, "third delivery", func() bool { return f.count() >= 3 })
	for i, g := range f.gaps() {
		if g < wait {
			t.Errorf("redelivery %d came after %s; asked for %s", i+2, g, wait)
		}
	}
	settled(t, b, "verify")
	if got := f.count(); got != 3 {
		t.Errorf("handled %d times; want 3 (acked on the third)", got)
	}
	if len(dlq(t, b, "verify")) != 0 {
		t.Error("a not-yet was dead-lettered")
	}
}

func TestCrashBeforeAckRedeliversWithoutDuplicatingOutputs(t *testing.T) {
	b := bustest.New(t, nil)
	var upstreamRuns atomic.Int32
	up := &fn{name: "compute-spec", types: []string{events.ImagePushed},
		handle: func(_ context.Context, in cloudevents.Event, _ int) ([]cloudevents.Event, error) {
			upstreamRuns.Add(1)
			out, err := events.Derive(in, events.RolloutResumed, events.Source("compute-spec"), "k", "s",
				events.ResumeData{Workload: events.ObjectRef{Kind: "Deployment", Namespace: "n", Name: "w"}})
			return []cloudevents.Event{out}, err
		}}
	down := &fn{name: "verify", types: []string{events.RolloutResumed},
		handle: func(context.Context, cloudevents.Event, int) ([]cloudevents.Event, error) { return nil, nil }}

	// Consumers of the whole chain exist before anything is published, as
	// `inplace run` sets them up.
	if err := b.EnsureConsumers(t.Context(), runner.Specs(up, down)...); err != nil {
		t.Fatal(err)
	}
	// First process: publishes the output, then "crashes" before acking.
	crash := runner.WithBeforeAck(runner.Options{}, func(string) bool { return false })
	stop := start(t, b, crash, up)
	if err := b.Publish(t.Context(), pushedEvent(t, "c-1")); err != nil {
		t.Fatal(err)
	}
	world.Until(t, 10*time.Second, "first handling", func() bool { return upstreamRuns.Load() == 1 })
	stop()

	// Second process: the input is redelivered (never acked) and handled again.
	start(t, b, runner.Options{}, up, down)
	world.Until(t, 20*time.Second, "redelivery after the crash", func() bool { return upstreamRuns.Load() == 2 })
	world.Until(t, 10*time.Second, "downstream delivery", func() bool { return down.count() >= 1 })
	settled(t, b, "compute-spec") // acked after it published again
	settled(t, b, "verify")
	if got := down.count(); got != 1 {
		t.Errorf("downstream saw the output %d times; want 1 (dedup by derived id)", got)
	}
}

func TestShutdownDrainsInFlight(t *testing.T) {
	b := bustest.New(t, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var deadline time.Duration
	slow := &fn{name: "pre-pull", types: []string{events.ImagePushed},
		handle: func(ctx context.Context, _ cloudevents.Event, n int) ([]cloudevents.Event, error) {
			if n == 1 {
				d, _ := ctx.Deadline()
				deadline = time.Until(d)
				close(entered)
				<-release
			}
			return nil, ctx.Err()
		}}
	stop := start(t, b, runner.Options{}, slow)
	if err := b.Publish(t.Context(), pushedEvent(t, "d-1")); err != nil {
		t.Fatal(err)
	}
	<-entered
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Run returned while a handler was in flight")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	<-stopped
	if deadline <= 0 || deadline >= bustest.Config().AckWait {
		t.Errorf("handler deadline %s is not below AckWait %s", deadline, bustest.Config().AckWait)
	}
	// The in-flight input was settled (acked) before shutdown: the bus will
	// not deliver it again.
	settled(t, b, "pre-pull")
	if got := slow.count(); got != 1 {
		t.Errorf("handled %d times; the drained message was not acked", got)
	}
}

func TestMalformedEventIsDeadLettered(t *testing.T) {
	b := bustest.New(t, nil)
	f := &fn{name: "compute-spec", types: []string{events.ImagePushed},
		handle: func(context.Context, cloudevents.Event, int) ([]cloudevents.Event, error) { return nil, nil }}
	start(t, b, runner.Options{}, f)
	e := pushedEvent(t, "bad-1")
	if err := e.SetData(cloudevents.ApplicationJSON, map[string]string{"registry": "r"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	var letters []jetstream.Msg
	world.Until(t, 10*time.Second, "dead letter", func() bool { letters = dlq(t, b, "compute-spec"); return len(letters) > 0 })
	if r := letters[0].Headers().Get(bus.HeaderDLQReason); r == "" || f.count() != 0 {
		t.Errorf("reason %q, handler calls %d; want a reason naming the field and no call", r, f.count())
	}
	t.Logf("reason: %s", letters[0].Headers().Get(bus.HeaderDLQReason))
}
