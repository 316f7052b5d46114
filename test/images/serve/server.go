package serve

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/inplace-dev/inplace/test/images/settings"
)

// Server answers requests as its settings say. Its zero value is not
// usable: call New.
type Server struct {
	cfg     settings.Server
	ready   atomic.Bool // the start delay has passed
	drain   atomic.Bool // a stop has begun
	errs    errorShare
	mux     *http.ServeMux
	metrics *metrics
}

// New makes a server, not ready until MarkReady.
func New(cfg settings.Server) *Server {
	s := &Server{cfg: cfg, errs: errorShare{rate: cfg.ErrorRate}, mux: http.NewServeMux(), metrics: newMetrics(cfg.Version)}
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("/", s.answer)
	return s
}

// ServeHTTP serves every path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// MarkReady makes /readyz answer 200 (unless draining).
func (s *Server) MarkReady() {
	s.ready.Store(true)
	s.metrics.ready.Set(1)
}

// Drain makes /readyz answer 503 from now on.
func (s *Server) Drain() {
	s.drain.Store(true)
	s.metrics.ready.Set(0)
}

// Ready reports what /readyz answers.
func (s *Server) Ready() bool { return s.ready.Load() && !s.drain.Load() }

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if !s.Ready() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// answer answers with the version, or with 500 for its share of requests.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if s.cfg.Latency > 0 {
		t := time.NewTimer(s.cfg.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	w.Header().Set(settings.VersionHeader, s.cfg.Version)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	code := http.StatusOK
	if s.errs.next() {
		code = http.StatusInternalServerError
	}
	w.WriteHeader(code)
	if code == http.StatusOK {
		fmt.Fprintln(w, s.cfg.Version)
	} else {
		fmt.Fprintln(w, s.cfg.Version, "error")
	}
	s.metrics.observe(code, time.Since(start))
}

// errorShare picks which requests fail: request n (from 1) fails when
// floor(n*rate) grows, so any run of requests fails its share, give or
// take one.
type errorShare struct {
	rate float64
	mu   sync.Mutex
	n    int64
}

func (e *errorShare) next() bool {
	if e.rate <= 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	return int64(float64(e.n)*e.rate) > int64(float64(e.n-1)*e.rate)
}

// metrics are the server's Prometheus metrics, in a registry of its own
// with the Go and process collectors.
type metrics struct {
	reg      *prometheus.Registry
	version  string
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	ready    prometheus.Gauge
}

func newMetrics(version string) *metrics {
	m := &metrics{
		reg:     prometheus.NewRegistry(),
		version: version,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total", Help: "Requests answered, by status code and version.",
		}, []string{"code", "version"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds", Help: "Time to answer a request, by version.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"version"}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{Name: "app_ready", Help: "1 while /readyz answers 200."}),
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "app_info", Help: "The version served."}, []string{"version"})
	info.WithLabelValues(version).Set(1)
	m.reg.MustRegister(m.requests, m.latency, m.ready, info,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(code int, d time.Duration) {
	m.requests.WithLabelValues(strconv.Itoa(code), m.version).Inc()
	m.latency.WithLabelValues(m.version).Observe(d.Seconds())
}
