// Package bustest starts a real in-process nats-server with JetStream for a
// test and returns a bus on it with short timings. It is for tests only.
package bustest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
)

// Config is bus.DefaultConfig with timings short enough for tests.
func Config() bus.Config {
	c := bus.DefaultConfig()
	c.AckWait = 3 * time.Second
	c.Backoff = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	c.RetryLimit = 4
	return c
}

// Server starts an embedded server in t.TempDir(), stopped at cleanup.
func Server(t testing.TB) *embednats.Server {
	t.Helper()
	s, err := embednats.Start(embednats.Options{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// Conn connects to s, closed at cleanup.
func Conn(t testing.TB, s *embednats.Server) *nats.Conn {
	t.Helper()
	return connAs(t, s, t.Name())
}

// Replica is a bus on s (Config()) on a connection of its own named name,
// as one replica of a process has: closing the connection kills the
// replica without a word (its leases left to expire). The connection is
// closed at cleanup.
func Replica(t testing.TB, s *embednats.Server, name string) (*bus.Bus, *nats.Conn) {
	t.Helper()
	nc := connAs(t, s, name)
	b, err := bus.Connect(t.Context(), nc, Config(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return b, nc
}

func connAs(t testing.TB, s *embednats.Server, name string) *nats.Conn {
	t.Helper()
	nc, err := s.Connect(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// New starts a server and returns a bus on it with cfg (Config() when nil).
func New(t testing.TB, cfg *bus.Config) *bus.Bus {
	t.Helper()
	c := Config()
	if cfg != nil {
		c = *cfg
	}
	b, err := bus.Connect(t.Context(), Conn(t, Server(t)), c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
