package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentServer accepts connections and never answers: an API server that
// hangs. Its address is https://127.0.0.1:PORT.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "https://" + ln.Addr().String()
}

// emptyKubeconfig is a kubeconfig naming no cluster: the command reaches
// only the server its flags name, whatever the machine's ~/.kube holds.
func emptyKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runRootWithin runs the root command, stopping it after limit.
func runRootWithin(t *testing.T, limit time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	var out bytes.Buffer
	root := NewRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// Every command that reads the cluster fails, naming the server, when it
// cannot reach it: at once when the connection is refused, within
// --request-timeout when the server does not answer, and within the
// command's own deadline when --request-timeout is 0 (kubectl's default).
func TestUnreachableAPIServer(t *testing.T) {
	old := defaultKubeDeadline
	defaultKubeDeadline = 2 * time.Second
	t.Cleanup(func() { defaultKubeDeadline = old })
	image := "r.example/shop/web:1.0.0@sha256:" + strings.Repeat("1", 64)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(events, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	commands := [][]string{
		{"plan", "deploy/web", "--image", image},
		{"plan", "--image", image},
		{"plan", "-n", "shop", "--image", image},
		{"upgrade", "deploy/web", "--image", image},
		{"status", "deploy/web"},
		{"undo", "deploy/web"},
		{"restart", "deploy/web", "-c", "app"},
		{"resize", "deploy/web", "-c", "app", "--cpu", "1"},
		{"replay", "-f", events, "--dry-run"},
	}
	silent := silentServer(t)
	for _, server := range []struct {
		name, url string
		flags     []string
		within    time.Duration
	}{
		{"refused", "https://127.0.0.1:1", nil, 5 * time.Second},
		{"silent, --request-timeout 1s", silent, []string{"--request-timeout", "1s"}, 4 * time.Second},
		{"silent, the command's deadline", silent, nil, 5 * time.Second},
	} {
		for _, args := range commands {
			t.Run(server.name+"/"+strings.Join(args[:2], " "), func(t *testing.T) {
				t.Parallel()
				args := append(append(args, "--kubeconfig", emptyKubeconfig(t), "--server", server.url), server.flags...)
				start := time.Now()
				out, err := runRootWithin(t, time.Minute, args...)
				took := time.Since(start)
				want := "could not reach the API server " + server.url
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err %v\n%s\nwant it to say %q", err, out, want)
				}
				if took > server.within {
					t.Errorf("took %s; want at most %s", took.Round(time.Millisecond), server.within)
				}
			})
		}
	}
}
