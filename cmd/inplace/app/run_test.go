package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/spf13/pflag"
)

// inplace run with the receiver alone (no cluster needed): embedded NATS,
// /healthz, /readyz and /metrics answer, and the process stops with its context.
func TestRunServesHealthAndMetrics(t *testing.T) {
	p := receiverProcess(t)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rr, err := app.Start(ctx, p, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/healthz": "ok",
		"/readyz":  "ok",
		"/metrics": "go_goroutines",
	} {
		resp, err := http.Get("http://" + rr.HTTPAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d %q; want 200 with %q", path, resp.StatusCode, body, want)
		}
	}
	if !strings.HasPrefix(rr.NATSURL, "nats://127.0.0.1:") {
		t.Errorf("embedded NATS at %s; want loopback", rr.NATSURL)
	}
	cancel()
	if err := rr.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
	if _, err := http.Get("http://" + rr.HTTPAddr + "/healthz"); err == nil {
		t.Error("the HTTP server still answers after the process stopped")
	}
}

// receiverProcess is inplace run's flag defaults with the receiver alone
// (no cluster needed), an embedded NATS in a temporary directory and free
// ports; a test sets what else it needs and validates it.
func receiverProcess(t *testing.T) *config.Process {
	t.Helper()
	var p config.Process
	if err := config.BindFlags(pflag.NewFlagSet("run", pflag.ContinueOnError), &p); err != nil {
		t.Fatal(err)
	}
	p.Functions, p.WatchPods = []string{"receiver"}, false
	p.NATSListen, p.NATSDataDir, p.HTTPAddr = "127.0.0.1:-1", filepath.Join(t.TempDir(), "nats"), "127.0.0.1:0"
	return &p
}
