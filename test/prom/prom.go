package prom

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/inplace-dev/inplace/test/nodepool"
	"github.com/inplace-dev/inplace/test/proc"
)

// Options for Start.
type Options struct {
	// BinDir holds the prometheus binary.
	BinDir string
	// Dir holds the configuration, the target file, the storage and the
	// log; a test's t.TempDir().
	Dir string
	// ScrapeInterval is how often every target is scraped. Default 1s.
	ScrapeInterval time.Duration
	// Targets are scraped from the start; SetTargets replaces them.
	Targets []Target
	// Kubeconfig, when set, adds Kubernetes service discovery of pods:
	// every pod annotated prometheus.io/scrape "true" with an IP is
	// scraped at its IP and the port of prometheus.io/port (default 8080),
	// path /metrics, its series labelled namespace, pod and node.
	Kubeconfig string
	Logger     *slog.Logger
}

// Target is one scrape target: host:port, scraped at /metrics, and the
// labels its series get (namespace, pod, ...).
type Target struct {
	Address string
	Labels  map[string]string
}

// Server is a running Prometheus.
type Server struct {
	p       *proc.Process
	url     string
	targets string
}

// Start writes the configuration, starts Prometheus and waits until it
// is ready.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin := filepath.Join(opts.BinDir, "prometheus")
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("start prometheus: %s is missing or not executable: run `make bin`", bin)
	}
	if opts.ScrapeInterval == 0 {
		opts.ScrapeInterval = time.Second
	}
	s := &Server{targets: filepath.Join(opts.Dir, "targets.json")}
	if err := s.SetTargets(opts.Targets); err != nil {
		return nil, err
	}
	conf := filepath.Join(opts.Dir, "prometheus.yml")
	if err := os.WriteFile(conf, config(opts.ScrapeInterval, s.targets, opts.Kubeconfig), 0o644); err != nil {
		return nil, fmt.Errorf("start prometheus: %w", err)
	}
	port, err := nodepool.FreePort()
	if err != nil {
		return nil, fmt.Errorf("start prometheus: %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s.url = "http://" + addr
	s.p, err = proc.Start(opts.Dir, "prometheus", bin, []string{
		"--config.file=" + conf,
		"--storage.tsdb.path=" + filepath.Join(opts.Dir, "data"),
		"--web.listen-address=" + addr,
		"--log.level=warn",
	})
	if err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if opts.Logger != nil {
		opts.Logger.Info("prometheus ready", "url", s.url, "scrape_interval", opts.ScrapeInterval)
	}
	return s, nil
}

// config scrapes the targets of one file every interval (the file is
// watched, so a change takes effect without a reload) and, with a
// kubeconfig, the annotated pods of the cluster.
func config(interval time.Duration, targets, kubeconfig string) []byte {
	b := fmt.Appendf(nil, `global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
- job_name: world
  file_sd_configs:
  - files: [%[2]q]
    refresh_interval: %[1]s
`, interval, targets)
	if kubeconfig == "" {
		return b
	}
	return fmt.Appendf(b, `- job_name: pods
  kubernetes_sd_configs:
  - role: pod
    kubeconfig_file: %q
  relabel_configs:
  - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape]
    regex: "true"
    action: keep
  - source_labels: [__meta_kubernetes_pod_ip]
    regex: .+
    action: keep
  - source_labels: [__meta_kubernetes_pod_ip]
    replacement: $1:8080
    target_label: __address__
  - source_labels: [__meta_kubernetes_pod_ip, __meta_kubernetes_pod_annotation_prometheus_io_port]
    regex: (.+);(\d+)
    replacement: $1:$2
    target_label: __address__
  - source_labels: [__meta_kubernetes_namespace]
    target_label: namespace
  - source_labels: [__meta_kubernetes_pod_name]
    target_label: pod
  - source_labels: [__meta_kubernetes_pod_node_name]
    target_label: node
`, kubeconfig)
}

// URL is the base of Prometheus's HTTP API.
func (s *Server) URL() string { return s.url }

// SetTargets replaces the targets Prometheus scrapes (written whole, then
// renamed into place, so Prometheus never reads half a file).
func (s *Server) SetTargets(ts []Target) error {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels,omitempty"`
	}
	groups := make([]group, 0, len(ts))
	for _, t := range ts {
		groups = append(groups, group{Targets: []string{t.Address}, Labels: t.Labels})
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return fmt.Errorf("prometheus targets: %w", err)
	}
	tmp := s.targets + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("prometheus targets: %w", err)
	}
	if err := os.Rename(tmp, s.targets); err != nil {
		return fmt.Errorf("prometheus targets: %w", err)
	}
	return nil
}

func (s *Server) waitReady(ctx context.Context) error {
	hc := &http.Client{Timeout: time.Second}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := s.p.ErrExited(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/-/ready", nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("start prometheus: not ready: %w%s", err, proc.Tails(20, s.p))
	}
	return nil
}

// Stop ends Prometheus. A nil Server is a no-op.
func (s *Server) Stop() {
	if s == nil {
		return
	}
	s.p.Stop(10 * time.Second)
}

// Logs is the tail of Prometheus's log, for a failing test.
func (s *Server) Logs() string { return proc.Tails(30, s.p) }
