package serve

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/world"
)

// TestRunCrash: Crash returns ErrCrash before listening.
func TestRunCrash(t *testing.T) {
	err := Run(t.Context(), settings.Server{Listen: "127.0.0.1:0", Crash: true}, slog.New(slog.DiscardHandler), nil,
		func(net.Addr) { t.Error("listened") })
	if !errors.Is(err, ErrCrash) {
		t.Errorf("Run = %v, want ErrCrash", err)
	}
}

// TestRunStartAndStop: /readyz turns 200 after the start delay; after a
// stop, the server still answers (closing each connection) with /readyz
// 503 for the stop delay, then Run returns.
func TestRunStartAndStop(t *testing.T) {
	cfg := settings.Server{Version: "3", Listen: "127.0.0.1:0", StartDelay: 200 * time.Millisecond, StopDelay: 300 * time.Millisecond}
	stop, addrs, done := make(chan struct{}), make(chan net.Addr, 1), make(chan error, 1)
	started := time.Now()
	go func() {
		done <- Run(t.Context(), cfg, slog.New(slog.DiscardHandler), stop, func(a net.Addr) { addrs <- a })
	}()
	base := "http://" + (<-addrs).String()
	if code, _ := fetch(t, base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz at start = %d, want 503", code)
	}
	world.Until(t, 10*time.Second, "ready", func() bool { code, _ := fetch(t, base+"/readyz"); return code == http.StatusOK })
	if d := time.Since(started); d < cfg.StartDelay {
		t.Errorf("ready after %s, want at least the start delay %s", d, cfg.StartDelay)
	}
	stopped := time.Now()
	close(stop)
	world.Until(t, 10*time.Second, "draining", func() bool { code, _ := fetch(t, base+"/readyz"); return code == http.StatusServiceUnavailable })
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatalf("GET / while draining: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("GET / while draining = %d (close %v), want 200 with the connection closed", resp.StatusCode, resp.Close)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if d := time.Since(stopped); d < cfg.StopDelay {
		t.Errorf("stopped after %s, want at least the stop delay %s", d, cfg.StopDelay)
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("still answering after Run returned")
	}
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
