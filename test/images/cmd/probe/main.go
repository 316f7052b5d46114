// Command probe is the traffic probe: it sends PROBE_RATE requests a
// second (default 50) to PROBE_URL, each on a new connection with a
// PROBE_TIMEOUT (default 1s), counts how they end and which versions
// answer, and serves the counts on PROBE_LISTEN (default :8080): GET
// /counts, POST /stop, GET /readyz (see test/traffic/probe). It runs as a
// pod of the test world, so it resolves Service names through the
// cluster's DNS and reaches them through kube-proxy; test/traffic starts
// it and reads its counts. SIGTERM or SIGINT stops it (exit 0).
package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/traffic/probe"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("exiting", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	cfg, err := settings.ParseProbe(os.LookupEnv, settings.DefaultProbe)
	if err != nil {
		return err
	}
	p, err := probe.New(cfg.URL, cfg.Rate, cfg.Timeout)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return err
	}
	svc := probe.Start(ctx, p)
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve", "err", err)
		}
	}()
	log.Info("probing", "url", cfg.URL, "rate", cfg.Rate, "timeout", cfg.Timeout, "listen", ln.Addr().String())
	<-ctx.Done()
	final := svc.Stop()
	log.Info("stopped", "sent", final.Sent, "ok", final.OK, "failed", final.Failed, "versions", final.Versions)
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shut)
}
