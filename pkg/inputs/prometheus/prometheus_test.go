package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/inputs/prometheus"
	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/prom"
)

// startProm runs a real Prometheus scraping one target that serves
// analysis_test_value for the pods a and b, and waits for its first scrape.
func startProm(t *testing.T) *prometheus.Client {
	t.Helper()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE analysis_test_value gauge\n"+
			"analysis_test_value{pod=\"a\"} 0.25\nanalysis_test_value{pod=\"b\"} 0.5\n")
	}))
	t.Cleanup(target.Close)
	bin, err := cluster.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := prom.Start(t.Context(), prom.Options{
		BinDir: bin, Dir: t.TempDir(), ScrapeInterval: 200 * time.Millisecond,
		Targets: []prom.Target{{Address: strings.TrimPrefix(target.URL, "http://"), Labels: map[string]string{"namespace": "shop"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c, err := prometheus.New(prometheus.Config{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		v, err := c.Query(ctx, `count(analysis_test_value)`, time.Now())
		return err == nil && v != nil && *v == 2, nil
	})
	if err != nil {
		t.Fatalf("no scrape of the target: %v%s", err, srv.Logs())
	}
	return c
}

func TestQueryRealPrometheus(t *testing.T) {
	c := startProm(t)
	for _, tc := range []struct {
		name, expr    string
		want          *float64
		nan           bool
		wantErr       string
		wantPermanent bool
	}{
		{name: "one series", expr: `sum(analysis_test_value{pod=~"a"})`, want: ptr(0.25)},
		{name: "labels from the target list", expr: `sum(analysis_test_value{namespace="shop"})`, want: ptr(0.75)},
		{name: "scalar", expr: `scalar(sum(analysis_test_value))`, want: ptr(0.75)},
		{name: "no data", expr: `sum(analysis_test_value{pod="none"})`},
		{name: "NaN", expr: `sum(analysis_test_value{pod="a"}) * 0 / 0`, nan: true},
		{name: "more than one series", expr: `analysis_test_value`, wantErr: "2 series, want one", wantPermanent: true},
		{name: "not PromQL", expr: `sum(`, wantErr: "bad_data", wantPermanent: true},
		{name: "a range vector", expr: `analysis_test_value[1m]`, wantErr: `result type "matrix"`, wantPermanent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Query(t.Context(), tc.expr, time.Now())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "prometheus query: ") {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				if errors.Is(err, settle.ErrPermanent) != tc.wantPermanent {
					t.Errorf("permanent %v, want %v: %v", !tc.wantPermanent, tc.wantPermanent, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.nan {
				if got == nil || !math.IsNaN(*got) {
					t.Fatalf("got %v, want NaN", got)
				}
				return
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestMeasureRealPrometheus(t *testing.T) {
	c := startProm(t)
	q := analysis.Query{Name: "value", Query: `sum(analysis_test_value{namespace="{{.Namespace}}",pod=~"{{.Pods}}"})`,
		Comparison: "<", Threshold: 0.1, Baseline: true}
	target := analysis.Target{Namespace: "shop", Workload: "web", Canary: []string{"a"}, Baseline: []string{"b"}}
	now := time.Now()
	got := c.Measure(t.Context(), q, nil, target, now)
	want := analysis.Measurement{Query: "value", At: now, Value: ptr(0.25), Baseline: ptr(0.5)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if out, v := analysis.Judge(q, got); out != analysis.Success || v != -0.25 {
		t.Errorf("Judge: %s %g, want Success -0.25", out, v)
	}
	target.Baseline = []string{"gone"}
	if got := c.Measure(t.Context(), q, nil, target, now); got.Baseline != nil {
		t.Errorf("baseline pods without data: %+v, want no baseline", got)
	} else if out, _ := analysis.Judge(q, got); out != analysis.NoVerdict {
		t.Errorf("Judge without baseline: %s, want %s", out, analysis.NoVerdict)
	}
}

func TestQueryFailures(t *testing.T) {
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		return "http://" + l.Addr().String()
	}()
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(stop) })
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"scalar","result":[1,"%s"]}}`, strings.Repeat("1", 4096))
	}))
	t.Cleanup(big.Close)
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>bad gateway</html>")
	}))
	t.Cleanup(html.Close)
	for _, tc := range []struct {
		name    string
		cfg     prometheus.Config
		wantErr string
	}{
		{"unreachable", prometheus.Config{URL: closed}, "connection refused"},
		{"timeout", prometheus.Config{URL: hang.URL, Timeout: 200 * time.Millisecond}, "context deadline exceeded"},
		{"too large", prometheus.Config{URL: big.URL, MaxBytes: 1024}, "answer larger than 1024 bytes"},
		{"not Prometheus", prometheus.Config{URL: html.URL}, "HTTP 502, text/html; charset=utf-8, not a Prometheus answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := prometheus.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			v, err := c.Query(t.Context(), "up", time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, %v; want an error containing %q", v, err, tc.wantErr)
			}
			if errors.Is(err, settle.ErrPermanent) {
				t.Errorf("%v: permanent, want retryable", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func TestNewRefusesABadConfig(t *testing.T) {
	for _, cfg := range []prometheus.Config{
		{URL: ""}, {URL: "prometheus:9090"}, {URL: "ftp://x"}, {URL: "http://"},
		{URL: "http://x", Timeout: -1}, {URL: "http://x", MaxBytes: -1},
	} {
		if _, err := prometheus.New(cfg); err == nil || !strings.HasPrefix(err.Error(), "prometheus: ") {
			t.Errorf("New(%+v): %v, want an error", cfg, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
