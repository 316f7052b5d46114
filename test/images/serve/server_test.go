package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/test/images/settings"
)

func get(t *testing.T, h http.Handler, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body), rec.Result().Header
}

// TestAnswersVersion: every path but the endpoints answers the version,
// in the body and the header.
func TestAnswersVersion(t *testing.T) {
	s := New(settings.Server{Version: "1.4.2"})
	for _, path := range []string{"/", "/anything/else?x=1"} {
		code, body, h := get(t, s, path)
		if code != http.StatusOK || body != "1.4.2\n" || h.Get(settings.VersionHeader) != "1.4.2" {
			t.Errorf("GET %s = %d %q %s=%q, want 200 \"1.4.2\\n\" with the header", path, code, body, settings.VersionHeader, h.Get(settings.VersionHeader))
		}
	}
}

// TestReadiness: /readyz is 503 before MarkReady, 200 after, 503 again
// once draining; /healthz is 200 throughout.
func TestReadiness(t *testing.T) {
	s := New(settings.Server{Version: "v"})
	var got []int
	look := func() {
		r, _, _ := get(t, s, "/readyz")
		h, _, _ := get(t, s, "/healthz")
		got = append(got, r, h)
	}
	look()
	s.MarkReady()
	look()
	s.Drain()
	look()
	want := []int{503, 200, 200, 200, 503, 200}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/readyz, /healthz before, ready, draining (-want +got):\n%s", diff)
	}
}

// TestErrorShare: with ErrorRate 0.1, exactly 10 of 100 requests are
// answered 500 (naming the version), and /readyz stays 200.
func TestErrorShare(t *testing.T) {
	s := New(settings.Server{Version: "bad", ErrorRate: 0.1})
	s.MarkReady()
	codes := map[int]int{}
	for range 100 {
		code, body, h := get(t, s, "/")
		codes[code]++
		if h.Get(settings.VersionHeader) != "bad" || !strings.HasPrefix(body, "bad") {
			t.Fatalf("answer %d %q without the version", code, body)
		}
	}
	if diff := cmp.Diff(map[int]int{200: 90, 500: 10}, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	if code, _, _ := get(t, s, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d, want 200 while failing requests", code)
	}
}

// TestMetrics: /metrics is the Prometheus text format with requests by
// code and version, a latency histogram, readiness and the version.
func TestMetrics(t *testing.T) {
	s := New(settings.Server{Version: "2.0.0", ErrorRate: 0.5})
	s.MarkReady()
	for range 4 {
		get(t, s, "/")
	}
	code, body, h := get(t, s, "/metrics")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics = %d %s", code, h.Get("Content-Type"))
	}
	for _, want := range []string{
		`http_requests_total{code="200",version="2.0.0"} 2`,
		`http_requests_total{code="500",version="2.0.0"} 2`,
		`http_request_duration_seconds_count{version="2.0.0"} 4`,
		`http_request_duration_seconds_bucket{version="2.0.0",le="+Inf"} 4`,
		`app_ready 1`,
		`app_info{version="2.0.0"} 1`,
		`# TYPE http_request_duration_seconds histogram`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
