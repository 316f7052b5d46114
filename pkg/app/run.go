package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/embednats"
	"github.com/inplace-dev/inplace/pkg/metrics"
	"github.com/inplace-dev/inplace/pkg/receiver"
	"github.com/inplace-dev/inplace/pkg/runner"
)

// Running is a started `inplace run`.
type Running struct {
	App    *App
	Bus    *bus.Bus
	Runner *runner.Runner
	// HTTPAddr is where /healthz, /readyz, /metrics and /hooks/ are served.
	HTTPAddr string
	// NATSURL is the NATS server the process uses (the embedded one's URL
	// when it started one).
	NATSURL string

	done chan error
}

// Start runs what p describes: NATS (embedded unless p.NATSURL is set),
// the stream, the functions, the receiver, the pod watcher and the HTTP
// server. It returns once every function pulls from its consumer; the
// process stops when ctx ends (see Wait).
func Start(ctx context.Context, p *config.Process, log *slog.Logger) (*Running, error) {
	nc, url, closeNATS, err := connectNATS(p, log)
	if err != nil {
		return nil, err
	}
	rr := &Running{NATSURL: url, done: make(chan error, 1)}
	fail := func(err error) (*Running, error) { closeNATS(); return nil, err }
	if rr.Bus, err = bus.Connect(ctx, nc, p.Bus, log); err != nil {
		return fail(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if rr.App, err = Build(ctx, p, rr.Bus, reg, log); err != nil {
		return fail(err)
	}
	rr.Runner = runner.New(rr.Bus, runner.Options{Workers: p.Workers, Log: log, Metrics: metrics.New(reg)}, rr.App.Functions...)
	ln, err := net.Listen("tcp", p.HTTPAddr)
	if err != nil {
		return fail(fmt.Errorf("--http-addr %s: %w", p.HTTPAddr, err))
	}
	rr.HTTPAddr = ln.Addr().String()
	// The receiver bounds each body itself (its readTimeout); these are the
	// backstops for every endpoint.
	srv := &http.Server{Handler: mux(reg, rr.Runner, rr.App.Receiver), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	go func() { _ = srv.Serve(ln) }()
	for _, loop := range rr.App.Background {
		go loop(ctx)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- rr.Runner.Run(ctx) }()
	go func() {
		err := <-runErr
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		closeNATS()
		rr.done <- err
	}()
	if err := waitReady(ctx, rr.Runner, runErr); err != nil {
		return nil, err
	}
	log.Info("inplace running", "functions", p.Functions, "http", rr.HTTPAddr, "nats", url, "stream", p.Bus.Stream)
	return rr, nil
}

// Wait blocks until the process has stopped (its context ended) and
// returns the runner's error.
func (rr *Running) Wait() error { return <-rr.done }

func waitReady(ctx context.Context, r *runner.Runner, runErr chan error) error {
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

// connectNATS dials p.NATSURL, or starts the embedded server.
func connectNATS(p *config.Process, log *slog.Logger) (*nats.Conn, string, func(), error) {
	if p.NATSURL != "" {
		nc, err := nats.Connect(p.NATSURL, nats.Name("inplace"), nats.MaxReconnects(-1))
		if err != nil {
			return nil, "", nil, fmt.Errorf("connect to NATS %s: %w", p.NATSURL, err)
		}
		return nc, p.NATSURL, nc.Close, nil
	}
	host, ps, err := net.SplitHostPort(p.NATSListen)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--nats-listen %q: %w", p.NATSListen, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--nats-listen %q: port: %w", p.NATSListen, err)
	}
	srv, err := embednats.Start(embednats.Options{DataDir: p.NATSDataDir, Host: host, Port: port})
	if err != nil {
		return nil, "", nil, err
	}
	log.Info("embedded NATS started", "url", srv.URL(), "data", p.NATSDataDir)
	nc, err := srv.Connect("inplace")
	if err != nil {
		srv.Shutdown()
		return nil, "", nil, err
	}
	return nc, srv.URL(), func() { nc.Close(); srv.Shutdown() }, nil
}

func mux(reg *prometheus.Registry, r *runner.Runner, hooks http.Handler) *http.ServeMux {
	m := http.NewServeMux()
	if hooks != nil {
		m.Handle(receiver.PathPrefix, hooks)
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
