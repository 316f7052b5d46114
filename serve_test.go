package function

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/world"
)

// TestReceiverToSink runs the Knative receiver as Serve does for
// INPLACE_FUNCTIONS=receiver: a webhook delivery becomes image.pushed at
// K_SINK; a sink that is down makes the registry retry (503).
func TestReceiverToSink(t *testing.T) {
	sk := newSink(t)
	hooks := filepath.Join(t.TempDir(), "receiver.yaml")
	routes := "routes:\n  - name: ci\n    format: generic\n    auth: {type: none}\n"
	if err := os.WriteFile(hooks, []byte(routes), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveReceiver(ctx, map[string]string{FunctionsKey: "receiver", "LISTEN_ADDRESS": addr,
			"K_SINK": sk.srv.URL, "INPLACE_HOOKS_CONFIG": hooks})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("receiver: %v", err)
		}
	})
	url := "http://" + addr
	if err := world.Eventually(t.Context(), time.Minute, "the receiver up", func(context.Context) (bool, error) {
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, image string
		want        int
	}{
		{"a push reaches the Broker", "registry.example.com/team/app:1.4.2", http.StatusAccepted},
		{"the Broker down: the registry retries", "registry.example.com/team/app:sink-500", http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(url+"/hooks/ci", "application/json", strings.NewReader(`{"image":"`+tt.image+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if got := sunk(sk, events.ImagePushed); len(got) != 1 {
		t.Errorf("K_SINK got %d image.pushed, want 1", len(got))
	}
}
