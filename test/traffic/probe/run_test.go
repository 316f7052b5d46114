package probe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/world"
)

// flaky answers request n (from 0) by n mod 5: ok from version v1, ok
// from v2, 500 from v2, a reset (the connection closed without an
// answer), no answer until the client gives up; it tallies what it did.
type flaky struct {
	mu    sync.Mutex
	n     int
	tally map[string]int64
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	kind := []string{"v1", "v2", "500", "reset", "timeout"}[f.n%5]
	f.n++
	f.tally[kind]++
	f.mu.Unlock()
	switch kind {
	case "v1", "v2":
		w.Header().Set(settings.VersionHeader, kind)
		fmt.Fprintln(w, kind)
	case "500":
		w.Header().Set(settings.VersionHeader, "v2")
		w.WriteHeader(http.StatusInternalServerError)
	case "reset":
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
			_ = conn.Close()
		}
	case "timeout":
		<-r.Context().Done()
	}
}

// TestCounts: run against a server that fails requests in every way, the
// probe's counts match what the server did, kind by kind.
func TestCounts(t *testing.T) {
	f := &flaky{tally: map[string]int64{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p, err := New(srv.URL+"/", 200, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		defer cancel()
		if err := world.Eventually(ctx, 30*time.Second, "50 requests sent", func(context.Context) (bool, error) { return p.Counts().Sent >= 50, nil }); err != nil {
			t.Error(err) // not Fatal: this is not the test's goroutine
		}
	}()
	got := p.Run(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	want := Counts{
		At: got.At, Sent: int64(f.n), OK: f.tally["v1"] + f.tally["v2"],
		Failed: f.tally["500"] + f.tally["reset"] + f.tally["timeout"],
		Reset:  f.tally["reset"], Timeout: f.tally["timeout"], ServerError: f.tally["500"],
		Versions: map[string]int64{"v1": f.tally["v1"], "v2": f.tally["v2"]}, FailedVersions: map[string]int64{"v2": f.tally["500"]},
		Samples: got.Samples,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got.InFlight() != 0 || len(got.Samples) != maxSamples {
		t.Errorf("%d in flight, %d samples; want 0 and %d after Run", got.InFlight(), len(got.Samples), maxSamples)
	}
}

// TestRefused: requests to a port nobody listens on count as refused.
func TestRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	p, err := New("http://"+addr+"/", 100, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		defer cancel()
		if err := world.Eventually(ctx, 30*time.Second, "5 requests failed", func(context.Context) (bool, error) { return p.Counts().Failed >= 5, nil }); err != nil {
			t.Error(err) // not Fatal: this is not the test's goroutine
		}
	}()
	got := p.Run(ctx)
	if got.Refused != got.Sent || got.Failed != got.Sent || got.OK != 0 {
		t.Errorf("counts %+v, want every request refused", got)
	}
}

// TestSub: a window holds only what was counted after it opened.
func TestSub(t *testing.T) {
	t0 := time.Now()
	before := Counts{At: t0, Sent: 10, OK: 9, Failed: 1, Refused: 1, Versions: map[string]int64{"v1": 9},
		Samples: []Sample{{At: t0.Add(-time.Second), Error: "old"}}}
	after := Counts{At: t0.Add(time.Second), Sent: 30, OK: 27, Failed: 2, Refused: 1, ServerError: 1,
		Versions: map[string]int64{"v1": 12, "v2": 15}, FailedVersions: map[string]int64{"v2": 1},
		Samples: []Sample{{At: t0.Add(-time.Second), Error: "old"}, {At: t0.Add(time.Millisecond), Error: "new"}}}
	want := Counts{At: after.At, Sent: 20, OK: 18, Failed: 1, ServerError: 1,
		Versions: map[string]int64{"v1": 3, "v2": 15}, FailedVersions: map[string]int64{"v2": 1},
		Samples: []Sample{{At: t0.Add(time.Millisecond), Error: "new"}}}
	if diff := cmp.Diff(want, after.Sub(before)); diff != "" {
		t.Errorf("window (-want +got):\n%s", diff)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		url     string
		rate    float64
		timeout time.Duration
	}{{"http://x/", 0, time.Second}, {"http://x/", 1, 0}, {"://bad", 1, time.Second}} {
		if _, err := New(tc.url, tc.rate, tc.timeout); err == nil {
			t.Errorf("New(%q, %g, %s) succeeded", tc.url, tc.rate, tc.timeout)
		}
	}
}
