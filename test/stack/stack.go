// Package stack runs the whole project on the test world: an `inplace run`
// (the same app.Start the binary uses: embedded NATS, every function, the
// receiver, the pod watcher) against the world's API server, with the
// world's registry posting its real Distribution notifications to the
// receiver. End-to-end tests, benchmarks and the demo share it.
package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// Options tune a stack.
type Options struct {
	// Dir holds the NATS store and the hooks config; required.
	Dir string
	// Log receives the process's logs; default discards them.
	Log *slog.Logger
	// Process changes the process configuration before it starts.
	Process func(*config.Process)
	// Member, when set, runs the stack as that fleet member's inplace: on
	// the member's NATS (a leaf node of the hub) as its identities, with
	// --fleet-member, and without the shared registry's notifications (a
	// fleet's pushes come from its hub).
	Member *world.Member
}

// Stack is a running inplace on a world.
type Stack struct {
	*app.Running
	World *world.World
	// HooksURL is the registry route of the receiver.
	HooksURL string
	// HooksToken is the route's bearer token, for a test that posts a
	// delivery itself.
	HooksToken string
	cancel     context.CancelFunc
}

// Route is the receiver route the world's registry posts to.
const Route = "registry"

// Start runs inplace on w until Stop.
func Start(ctx context.Context, w *world.World, opts Options) (*Stack, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if err := ensureNamespace(ctx, w, "inplace-system"); err != nil {
		return nil, err
	}
	token, err := WriteHooks(opts.Dir, w.Registry.Host())
	if err != nil {
		return nil, err
	}
	p := Process(w.Cluster.Kubeconfig(), opts.Dir)
	if m := opts.Member; m != nil {
		p.NATSURL, p.NATSCredentials, p.FleetMember = m.NATS.URL(), m.Credentials, m.Name
	}
	if opts.Process != nil {
		opts.Process(p)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	rr, err := app.Start(ctx, p, opts.Log)
	if err != nil {
		cancel()
		return nil, err
	}
	s := &Stack{Running: rr, World: w, cancel: cancel, HooksURL: "http://" + rr.HTTPAddr + "/hooks/" + Route,
		HooksToken: token}
	if opts.Member != nil {
		return s, nil
	}
	err = w.Registry.SetNotify(registry.Notify{URL: s.HooksURL, Headers: http.Header{"Authorization": {"Bearer " + token}},
		Timeout: 5 * time.Second, Backoff: 500 * time.Millisecond})
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Process is the configuration of the stack's `inplace run`: every
// function, the embedded NATS on a free loopback port, the HTTP server on
// a free loopback port, timings short enough for tests.
func Process(kubeconfig, dir string) *config.Process {
	p := &config.Process{}
	_ = config.BindFlags(flagSet(), p)
	p.Kubeconfig = kubeconfig
	p.NATSListen = "127.0.0.1:-1"
	p.NATSDataDir = filepath.Join(dir, "nats")
	p.HTTPAddr = "127.0.0.1:0"
	p.HooksConfig = filepath.Join(dir, "hooks.yaml")
	p.Functions = append([]string(nil), config.AllFunctions...)
	p.WatchPods = true
	p.Workers = 8
	p.Bus.AckWait = 10 * time.Second
	p.Bus.Backoff = []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}
	return p
}

// Stop ends the process and waits for it.
func (s *Stack) Stop() {
	s.cancel()
	_ = s.Wait()
}

// WriteHooks writes the receiver's routes: the world's registry, with a
// fresh bearer token, and returns the token.
func WriteHooks(dir, host string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	cfg := fmt.Sprintf(`routes:
  - name: %s
    format: distribution
    registry: %q
    auth:
      type: token
      prefix: "Bearer "
      secret: {value: %q}
`, Route, host, token)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return token, os.WriteFile(filepath.Join(dir, "hooks.yaml"), []byte(cfg), 0o600)
}

func ensureNamespace(ctx context.Context, w *world.World, name string) error {
	_, err := w.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}
