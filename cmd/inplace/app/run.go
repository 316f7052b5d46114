package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/metrics"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/inputs/receiver"
)

// Running is a started `inplace run`.
type Running struct {
	App *App
	// Bus is the operator's connection (the process's only one when it
	// runs without identities).
	Bus *bus.Bus
	// Runners run the functions, one per identity.
	Runners Runners
	// HTTPAddr is where /healthz, /readyz, /metrics and /hooks/ are served.
	HTTPAddr string
	// NATSURL is the NATS server the process uses (the embedded one's URL
	// when it started one); Credentials the directory of its identities.
	NATSURL, Credentials string

	done chan error
}

// Start runs what p describes: NATS (embedded unless p.NATSURL is set),
// the stream, the functions, the receiver, the pod watcher and the HTTP
// server. It returns once every function pulls from its consumer; the
// process stops when ctx ends (see Wait).
func Start(ctx context.Context, p *config.Process, log *slog.Logger) (*Running, error) {
	return StartWrapped(ctx, p, log, nil)
}

// StartWrapped is Start with each function passed through wrap before it
// runs (nil: as is): for instrumentation, or to inject faults in tests.
func StartWrapped(ctx context.Context, p *config.Process, log *slog.Logger, wrap func(runner.Function) runner.Function) (*Running, error) {
	l, err := connect(ctx, p, log)
	if err != nil {
		return nil, err
	}
	rr := &Running{Bus: l.admin, NATSURL: l.url, Credentials: p.CredentialsDir(), done: make(chan error, 1)}
	fail := func(err error) (*Running, error) { l.shutdown(); return nil, err }
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if rr.App, err = Build(ctx, p, l, reg, log); err != nil {
		return fail(err)
	}
	fns := rr.App.Functions
	if wrap != nil {
		fns = make([]runner.Function, 0, len(rr.App.Functions))
		for _, f := range rr.App.Functions {
			fns = append(fns, wrap(f))
		}
	}
	rr.Runners = runners(l, runner.Options{Workers: p.Workers, Log: log, Metrics: metrics.New(reg), Pinned: pinned(Consumers)}, fns)
	ln, err := net.Listen("tcp", p.HTTPAddr)
	if err != nil {
		return fail(fmt.Errorf("--http-addr %s: %w", p.HTTPAddr, err))
	}
	rr.HTTPAddr = ln.Addr().String()
	// The receiver bounds each body itself (its readTimeout); these are the
	// backstops for every endpoint.
	srv := &http.Server{Handler: mux(reg, rr.Runners, rr.App.Receiver), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	go func() { _ = srv.Serve(ln) }()
	for _, loop := range rr.App.Background {
		go loop(ctx)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- rr.Runners.Run(ctx) }()
	go func() {
		err := <-runErr
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		l.shutdown()
		rr.done <- err
	}()
	if err := waitReady(ctx, rr.Runners, runErr); err != nil {
		return nil, err
	}
	log.Info("inplace running", "functions", p.Functions, "http", rr.HTTPAddr, "nats", l.url, "stream", p.Bus.Stream)
	return rr, nil
}

// Wait blocks until the process has stopped (its context ended) and
// returns the runner's error.
func (rr *Running) Wait() error { return <-rr.done }

func waitReady(ctx context.Context, r readiness, runErr chan error) error {
	for !r.Ready() {
		select {
		case err := <-runErr:
			runErr <- err
			if err == nil {
				err = errors.New("stopped before it was ready")
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func mux(reg *prometheus.Registry, r readiness, hooks http.Handler) *http.ServeMux {
	m := http.NewServeMux()
	if hooks != nil {
		m.Handle(receiver.PathPrefix, hooks)
	}
	if os.Getenv("INPLACE_PPROF") != "" {
		// Profiling for benchmarks, off unless asked for: it exposes
		// stacks and timings to whoever reaches --http-addr.
		runtime.SetMutexProfileFraction(10)
		runtime.SetBlockProfileRate(int(time.Millisecond))
		m.HandleFunc("/debug/pprof/", pprof.Index)
		m.HandleFunc("/debug/pprof/profile", pprof.Profile)
		m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	m.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	m.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !r.Ready() {
			http.Error(w, "not ready: consumers are not pulling yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return m
}
