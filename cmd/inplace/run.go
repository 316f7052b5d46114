package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/pkg/app"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/embednats"
	"github.com/inplace-dev/inplace/pkg/metrics"
	"github.com/inplace-dev/inplace/pkg/receiver"
	"github.com/inplace-dev/inplace/pkg/runner"
)

func newRunCmd() *cobra.Command {
	var p config.Process
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the functions of the chain against NATS",
		Long: `run starts the functions named by --functions (all by default) on the
JetStream stream, the webhook receiver, the pod watcher, and an HTTP server
with /healthz, /readyz and /metrics. Without --nats-url it starts an
embedded NATS server (JetStream, loopback only) storing under --nats-data-dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := p.Validate(); err != nil {
				return err
			}
			return run(cmd.Context(), &p)
		},
	}
	if err := config.BindFlags(cmd.Flags(), &p); err != nil {
		// A malformed INPLACE_* variable: fail when the command runs.
		cmd.RunE = func(*cobra.Command, []string) error { return err }
	}
	return cmd
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// connectNATS dials --nats-url, or starts the embedded server.
func connectNATS(p *config.Process, log *slog.Logger) (*nats.Conn, func(), error) {
	if p.NATSURL != "" {
		nc, err := nats.Connect(p.NATSURL, nats.Name("inplace"), nats.MaxReconnects(-1))
		if err != nil {
			return nil, nil, fmt.Errorf("connect to NATS %s: %w", p.NATSURL, err)
		}
		return nc, nc.Close, nil
	}
	host, port, err := splitHostPort(p.NATSListen)
	if err != nil {
		return nil, nil, fmt.Errorf("--nats-listen: %w", err)
	}
	srv, err := embednats.Start(embednats.Options{DataDir: p.NATSDataDir, Host: host, Port: port})
	if err != nil {
		return nil, nil, err
	}
	log.Info("embedded NATS started", "url", srv.URL(), "data", p.NATSDataDir)
	nc, err := srv.Connect("inplace")
	if err != nil {
		srv.Shutdown()
		return nil, nil, err
	}
	return nc, func() { nc.Close(); srv.Shutdown() }, nil
}

func splitHostPort(hp string) (string, int, error) {
	host, ps, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	var port int
	if _, err := fmt.Sscan(ps, &port); err != nil {
		return "", 0, fmt.Errorf("port %q: %w", ps, err)
	}
	return host, port, nil
}

func run(ctx context.Context, p *config.Process) error {
	log := newLogger(p.LogLevel)
	nc, closeNATS, err := connectNATS(p, log)
	if err != nil {
		return err
	}
	defer closeNATS()
	b, err := bus.Connect(ctx, nc, p.Bus, log)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a, err := app.Build(ctx, p, b, reg, log)
	if err != nil {
		return err
	}
	r := runner.New(b, runner.Options{Workers: p.Workers, Log: log, Metrics: metrics.New(reg)}, a.Functions...)
	srv := &http.Server{Addr: p.HTTPAddr, Handler: httpMux(reg, r, a.Receiver), ReadHeaderTimeout: 10 * time.Second}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.ListenAndServe() }()
	log.Info("inplace running", "functions", p.Functions, "http", p.HTTPAddr, "stream", p.Bus.Stream)
	runErr := r.Run(ctx)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	if err := <-srvErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server on %s: %w", p.HTTPAddr, err)
	}
	return runErr
}

func httpMux(reg *prometheus.Registry, r *runner.Runner, hooks http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	if hooks != nil {
		mux.Handle(receiver.PathPrefix, hooks)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !r.Ready() {
			http.Error(w, "not ready: consumers are not pulling yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
