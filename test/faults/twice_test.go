package faults

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// TestEveryEventTwiceShuffled runs the chain with every event delivered to
// its function twice, each delivery after a random delay, so that events
// arrive out of order and again after their effects: the second delivery
// must change nothing, and the order must not matter.
func TestEveryEventTwiceShuffled(t *testing.T) {
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			e := newEnv(t, 1)
			c := e.startChaos()
			e.deploy(int32(pods), nil)
			base := e.pods()
			before := c.twice.Load()
			p := e.push("1.1.0")
			e.done(p, 3*time.Minute)
			n := int(c.twice.Load() - before)
			t.Logf("%d events delivered twice, shuffled", n)
			record(t, "every event delivered twice, shuffled", "events delivered twice", 1, n, pods, e.check(base, []pushed{p}))
		})
	}
}

// chaos delivers every event twice, after random delays.
type chaos struct {
	b     *bus.Bus
	mu    sync.Mutex
	rng   *rand.Rand
	seen  sync.Map
	twice atomic.Int64
}

func (c *chaos) delay(minMs, spanMs int) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Duration(minMs+c.rng.IntN(spanMs)) * time.Millisecond
}

// chaotic is a function whose every input is handled twice: the first
// handling publishes its outputs and asks for the input again later.
type chaotic struct {
	runner.Function
	c *chaos
}

func (f chaotic) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	time.Sleep(f.c.delay(0, 50)) // the point: a random handling time reorders the functions' work
	outs, err := f.Function.Handle(ctx, e)
	if err != nil {
		return outs, err
	}
	if _, again := f.c.seen.LoadOrStore(f.Name()+"/"+e.ID(), true); again {
		return outs, nil
	}
	for _, o := range outs {
		if err := f.c.b.Publish(ctx, o); err != nil {
			return nil, err
		}
	}
	f.c.twice.Add(1)
	return nil, settle.NotYet(f.c.delay(20, 800), "chaos: delivered again")
}

// startChaos runs the functions of the chain in this process, as `inplace
// run` does (app.StartWrapped), each behind chaotic.
func (e *env) startChaos() *chaos {
	e.t.Helper()
	p := &config.Process{}
	if err := config.BindFlags(pflag.NewFlagSet("chaos", pflag.ContinueOnError), p); err != nil {
		e.t.Fatal(err)
	}
	p.NATSURL, p.Kubeconfig, p.Namespace, p.HTTPAddr = e.nats.URL(), e.kubeconfig, e.ns, "127.0.0.1:0"
	p.Functions = []string{"compute-spec", "pre-pull", "patch-pod", "verify"}
	p.WatchPods, p.Workers, p.Bus, p.WatchdogPeriod = true, 4, e.cfg, time.Second
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	c := &chaos{b: e.b, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))}
	ctx, cancel := context.WithCancel(e.t.Context())
	rr, err := app.StartWrapped(ctx, p, log, func(f runner.Function) runner.Function { return chaotic{Function: f, c: c} })
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cancel()
		_ = rr.Wait()
	})
	return c
}
