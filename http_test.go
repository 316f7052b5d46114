package function

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/google/go-cmp/cmp"
	fce "knative.dev/func-go/cloudevents"

	"github.com/inplace-dev/inplace/events"
)

// sink is a K_SINK that records what it is sent; a subject ending in
// "sink-500" or "sink-400" makes it refuse with that status.
type sink struct {
	mu    sync.Mutex
	ids   map[string]int
	types map[string]string // id → type
	srv   *httptest.Server
}

func newSink(t *testing.T) *sink {
	s := &sink{ids: map[string]int{}, types: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := binding.ToEvent(r.Context(), cehttp.NewMessageFromHttpRequest(r))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case strings.HasSuffix(e.Subject(), "sink-500"):
			http.Error(w, "sink down", http.StatusInternalServerError)
			return
		case strings.HasSuffix(e.Subject(), "sink-400"):
			http.Error(w, "sink refuses", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.ids[e.ID()]++
		s.types[e.ID()] = e.Type()
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[id]
}

// serve runs f under func-go's CloudEvents runtime, wrapped as Serve wraps
// it, on a free loopback port, and returns its URL once it is ready.
func serve(t *testing.T, f *Function, env map[string]string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("LISTEN_ADDRESS", addr)
	for k, v := range env {
		t.Setenv(k, v)
	}
	svc := fce.New(f)
	h, err := f.wrap(svc.Handler, env)
	if err != nil {
		t.Fatal(err)
	}
	svc.Handler = h
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("func-go service did not stop")
		}
	})
	url := "http://" + addr
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if ok := ready(url); ok {
			return url
		}
		select {
		case err := <-done:
			t.Fatalf("func-go service stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("function not ready")
		}
	}
}

func ready(url string) bool {
	resp, err := http.Get(url + "/health/readiness")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// post sends e to url in binary or structured mode.
func post(t *testing.T, url string, e cloudevents.Event, structured bool) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := binding.WithForceBinary(t.Context())
	if structured {
		ctx = binding.WithForceStructured(t.Context())
	}
	if err := cehttp.WriteRequest(ctx, binding.ToMessage(&e), req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// reply is the event in resp, or nil when it carries none.
func reply(t *testing.T, resp *http.Response) (*cloudevents.Event, string) {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	e, err := binding.ToEvent(context.Background(), cehttp.NewMessageFromHttpResponse(resp))
	if err != nil {
		return nil, string(body)
	}
	return e, string(body)
}

func TestOverHTTP(t *testing.T) {
	sk := newSink(t)
	f := withFakes(fake{types: []string{events.ImagePushed, events.PodUpdated}})
	url := serve(t, f, map[string]string{"K_SINK": sk.srv.URL})
	fromSource := apiServerSourceEvent(t)
	adapted, err := events.Normalize(fromSource)
	if err != nil {
		t.Fatal(err)
	}
	malformed := pushedEvent(t, "bad-1", "one")
	if err := malformed.SetData(cloudevents.ApplicationJSON, map[string]string{"repository": "shop/web"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		in         cloudevents.Event
		status     int
		reply      string   // id of the reply event
		sunk       []string // ids the sink must have received
		retryAfter string
		body       string // in the body of an error answer
	}{
		{name: "one output is the reply", in: pushedEvent(t, "p-one", "one"), status: 200, reply: outID("p-one", 0)},
		{name: "no output", in: pushedEvent(t, "p-none", "none"), status: 200},
		{name: "three outputs: reply and two to K_SINK", in: pushedEvent(t, "p-three", "three"), status: 200,
			reply: outID("p-three", 0), sunk: []string{outID("p-three", 1), outID("p-three", 2)}},
		{name: "ApiServerSource update adapted to pod.updated", in: fromSource, status: 200, reply: outID(adapted.ID(), 0)},
		{name: "permanent is 422", in: pushedEvent(t, "p-perm", "permanent"), status: 422, body: "the plan names no container"},
		{name: "malformed data is 422 naming the field", in: malformed, status: 422, body: "data.registry"},
		{name: "retryable is 503", in: pushedEvent(t, "p-retry", "retry"), status: 503, body: "unavailable"},
		{name: "not yet is 503 with Retry-After", in: pushedEvent(t, "p-later", "later"), status: 503, retryAfter: "3"},
		{name: "a panic is 503", in: pushedEvent(t, "p-panic", "panic"), status: 503, body: "boom"},
		{name: "K_SINK down is 503", in: pushedEvent(t, "p-sink-down", "three-sink-500"), status: 503, body: "500"},
		{name: "K_SINK refusing for good is 422", in: pushedEvent(t, "p-sink-bad", "three-sink-400"), status: 422, body: "400"},
	}
	for _, mode := range []string{"binary", "structured"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				resp := post(t, url, tt.in, mode == "structured")
				if resp.StatusCode != tt.status {
					_, body := reply(t, resp)
					t.Fatalf("status = %d (%s), want %d", resp.StatusCode, body, tt.status)
				}
				if got := resp.Header.Get("Retry-After"); got != tt.retryAfter {
					t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
				}
				e, body := reply(t, resp)
				got := ""
				if e != nil {
					got = e.ID()
				}
				if diff := cmp.Diff(tt.reply, got); diff != "" {
					t.Errorf("reply id (-want +got):\n%s", diff)
				}
				if !strings.Contains(body, tt.body) {
					t.Errorf("body %q does not say %q", body, tt.body)
				}
				for _, id := range tt.sunk {
					if sk.count(id) == 0 {
						t.Errorf("K_SINK did not receive %s", id)
					}
				}
			})
		}
	}
}

// apiServerSourceEvent is a real ApiServerSource update about a pod
// (events/testdata, made by Knative's own constructor).
func apiServerSourceEvent(t *testing.T) cloudevents.Event {
	t.Helper()
	raw, err := os.ReadFile("events/testdata/apiserversource_pod_update.json")
	if err != nil {
		t.Fatal(err)
	}
	var e cloudevents.Event
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(fmt.Errorf("decode fixture: %w", err))
	}
	return e
}
