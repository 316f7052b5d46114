package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/inplace-dev/inplace/test/images/settings"
)

// ErrCrash is returned by Run when the settings say to crash.
var ErrCrash = errors.New("crashing at start, as configured")

// shutdownTimeout bounds the wait for answers in progress after the stop
// delay.
const shutdownTimeout = 5 * time.Second

// Run serves cfg until stop is closed (the program closes it on SIGTERM or
// SIGINT), then drains for cfg.StopDelay and shuts down. listening, when
// not nil, receives the address once the server listens.
func Run(ctx context.Context, cfg settings.Server, log *slog.Logger, stop <-chan struct{}, listening func(net.Addr)) error {
	if cfg.Crash {
		return ErrCrash
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	s := New(cfg)
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "version", cfg.Version,
		"startDelay", cfg.StartDelay, "stopDelay", cfg.StopDelay, "errorRate", cfg.ErrorRate)
	if listening != nil {
		listening(ln.Addr())
	}
	readyAt := time.AfterFunc(cfg.StartDelay, func() { s.MarkReady(); log.Info("ready") })
	defer readyAt.Stop()
	select {
	case <-stop:
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	return drain(s, srv, cfg.StopDelay, log)
}

// drain keeps answering for delay with /readyz 503 and each connection
// closed after its answer, then shuts the server down.
func drain(s *Server, srv *http.Server, delay time.Duration, log *slog.Logger) error {
	log.Info("stopping", "stopDelay", delay)
	s.Drain()
	srv.SetKeepAlivesEnabled(false)
	time.Sleep(delay)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// Main is a server program's main: settings from the environment (prefix,
// defaults), SIGTERM and SIGINT stop it; it returns the exit code (1 on a
// bad setting, a crash or a failure to serve).
func Main(prefix string, defaults settings.Server) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := settings.ParseServer(prefix, os.LookupEnv, defaults)
	if err != nil {
		log.Error("bad settings", "err", err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	stop := make(chan struct{})
	go func() { <-sigs; close(stop) }()
	if err := Run(context.Background(), cfg, log, stop, nil); err != nil {
		log.Error("exiting", "err", err)
		return 1
	}
	return 0
}
