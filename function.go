package function

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// HandleTimeout bounds one event: below func-go's 30s write timeout, so the
// answer always reaches the Broker.
const HandleTimeout = 25 * time.Second

// Publisher takes the outputs beyond the reply (app.SinkPublisher).
type Publisher interface {
	Publish(ctx context.Context, e cloudevents.Event) error
}

// builder assembles the functions of a process (app.BuildKnative).
type builder func(ctx context.Context, p *config.Process, log *slog.Logger) (*app.App, func(), error)

// Function is the instanced function func-go runs.
type Function struct {
	build   builder
	timeout time.Duration

	mu     sync.Mutex // guards Start/Stop
	ready  atomic.Bool
	byType map[string]runner.Function // set once before ready
	sink   Publisher
	gates  *gateOpener // set when the service runs verify
	log    *slog.Logger
	level  *slog.LevelVar
	base   context.Context // the instance's life, cancelled by Stop
	cancel context.CancelFunc
	close  func()

	later sync.Map // event id → *laterSlot, while RetryAfter serves it
}

// New returns the function; Start configures it.
func New() *Function {
	level := new(slog.LevelVar)
	return &Function{build: app.BuildKnative, timeout: HandleTimeout, level: level,
		log: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))}
}

// Start reads the configuration (INPLACE_* keys and K_SINK from cfg, which
// func-go fills from the environment), connects to Kubernetes (and to NATS
// for compute-spec), and makes the function ready. An error stops the
// service: a bad configuration fails fast, naming the key.
func (f *Function) Start(ctx context.Context, cfg map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil {
		return fmt.Errorf("function: already started")
	}
	p, err := processFrom(cfg)
	if err != nil {
		return fmt.Errorf("function: %w", err)
	}
	if err := f.level.UnmarshalText([]byte(p.LogLevel)); err != nil {
		return fmt.Errorf("function: INPLACE_LOG_LEVEL: %w", err)
	}
	if sink := cfg["K_SINK"]; sink != "" {
		pub, err := app.NewSinkPublisher(sink)
		if err != nil {
			return fmt.Errorf("function: K_SINK: %w", err)
		}
		f.sink = pub.WithTokenFile(sinkTokenFile(cfg))
	}
	f.base, f.cancel = context.WithCancel(ctx)
	a, closeApp, err := f.build(f.base, p, f.log)
	if err != nil {
		f.cancel()
		return fmt.Errorf("function: %w", err)
	}
	f.close = closeApp
	if err := f.watchConfig(a, p); err != nil {
		f.cancel()
		closeApp()
		return fmt.Errorf("function: %w", err)
	}
	for _, loop := range a.Background {
		go loop(f.base)
	}
	f.byType = index(a.Functions)
	if p.Runs(verify.Name) && a.Kube != nil {
		f.gates = &gateOpener{client: a.Kube, now: time.Now}
	}
	f.ready.Store(true)
	f.log.Info("inplace function ready", "functions", p.Functions, "sink", cfg["K_SINK"])
	return nil
}

// watchConfig runs compute-spec's ConfigMap and Secret watch for
// inplace.dev/restart-on-change, its restart requests sent to the Broker
// (K_SINK) like every other event the function makes: in Knative mode no
// bus is there to publish them on.
func (f *Function) watchConfig(a *app.App, p *config.Process) error {
	if !p.Runs(computespec.Name) || a.Cache == nil { // no cache: a build without Kubernetes (tests)
		return nil
	}
	if f.sink == nil {
		f.log.Warn("inplace.dev/restart-on-change is not watched: no K_SINK to send restart requests to (the SinkBinding of config/knative/eventing gives compute-spec one)")
		return nil
	}
	return a.WatchConfigChanges(f.base, f.sink, f.log)
}

// index maps each input type to the function taking it.
func index(fns []runner.Function) map[string]runner.Function {
	m := map[string]runner.Function{}
	for _, fn := range fns {
		for _, t := range fn.Types() {
			m[t] = fn
		}
	}
	return m
}

// Stop ends the informers, watches and connections Start opened.
func (f *Function) Stop(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ready.Store(false)
	if f.cancel != nil {
		f.cancel()
	}
	if f.close != nil {
		f.close()
		f.close = nil
	}
	return nil
}

// Ready reports whether Start has finished (caches synced).
func (f *Function) Ready(context.Context) (bool, error) { return f.ready.Load(), nil }

// Alive reports the instance alive: a failed Start stops the service.
func (f *Function) Alive(context.Context) (bool, error) { return true, nil }

// Handle runs the function taking e's type and answers with one of its
// outputs; the others go to K_SINK first. Its error carries the HTTP status.
func (f *Function) Handle(ctx context.Context, e cloudevents.Event) (*cloudevents.Event, error) {
	if !f.ready.Load() {
		return nil, f.answer(e, fmt.Errorf("function: not ready yet"))
	}
	in, err := events.Normalize(e)
	if err != nil {
		return nil, f.answer(e, err)
	}
	fn, ok := f.byType[in.Type()]
	if !ok {
		return nil, f.answer(e, settle.Permanentf("function: no function of this service takes %s (its Triggers are wrong)", in.Type()))
	}
	// The request's context is not used: the CloudEvents SDK may hand a
	// handler another request's context, ended when that request is.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout)
	defer cancel()
	defer context.AfterFunc(f.base, cancel)()
	if err := f.gates.open(hctx, in); err != nil {
		return nil, f.answer(e, err)
	}
	outs, err := call(hctx, fn, in)
	if err == nil && len(outs) > 1 {
		err = f.sendRest(hctx, outs[1:])
	}
	if err != nil {
		return nil, f.answer(e, err)
	}
	f.log.Debug("handled", "function", fn.Name(), "event", in.ID(), "type", in.Type(), "outputs", len(outs))
	if len(outs) == 0 {
		return nil, nil
	}
	return &outs[0], nil
}

// call runs the handler, turning a panic into a retryable error.
func call(ctx context.Context, fn runner.Function, e cloudevents.Event) (outs []cloudevents.Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: handler panic: %v\n%s", fn.Name(), p, debug.Stack())
		}
	}()
	return fn.Handle(ctx, e)
}

// sendRest sends the outputs after the first to K_SINK.
func (f *Function) sendRest(ctx context.Context, rest []cloudevents.Event) error {
	if f.sink == nil {
		types := make([]string, 0, len(rest))
		for _, e := range rest {
			types = append(types, events.Short(e.Type()))
		}
		return fmt.Errorf("function: %d more outputs (%s) and no K_SINK to send them to: bind the service with a SinkBinding",
			len(rest), strings.Join(types, ", "))
	}
	for _, e := range rest {
		if err := f.sink.Publish(ctx, e); err != nil {
			return fmt.Errorf("function: send output: %w", err)
		}
	}
	return nil
}
