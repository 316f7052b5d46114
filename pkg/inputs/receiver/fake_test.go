package receiver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// recorder is a Publisher that keeps what it was given, or fails.
type recorder struct {
	mu     sync.Mutex
	events []cloudevents.Event
	err    error
}

func (r *recorder) Publish(_ context.Context, e cloudevents.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.events = append(r.events, e)
	return nil
}

func (r *recorder) published() []cloudevents.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cloudevents.Event(nil), r.events...)
}

// fixturesAge takes deliveries of any age: the public fixtures were pushed
// years ago. TestReplayedDeliveryIsRefused tests the default.
const fixturesAge = 100 * 365 * 24 * time.Hour

// newTest builds a receiver on cfg with a recorder and its own metrics
// registry.
func newTest(t *testing.T, cfg Config) (*Receiver, *recorder, *prometheus.Registry) {
	t.Helper()
	pub := &recorder{}
	reg := prometheus.NewRegistry()
	h, err := New(cfg, pub, Options{Logger: discard(), Metrics: reg, MaxAge: fixturesAge})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h, pub, reg
}

func post(t *testing.T, h http.Handler, path string, header http.Header, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json") // every format takes it; a header may override
	for k, v := range header {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func str(s string) *string { return &s }

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func ids(es []cloudevents.Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID()
	}
	return out
}
