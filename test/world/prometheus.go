package world

import (
	"context"
	"fmt"
	"os"

	"github.com/inplace-dev/inplace/test/prom"
)

// startPrometheus runs Prometheus (bin/prometheus) beside the world,
// discovering pods through the world's API server: every pod annotated
// prometheus.io/scrape "true" is scraped at its IP (port
// prometheus.io/port, default 8080) every opts.PrometheusOptions'
// ScrapeInterval (default 1s), its series labelled namespace, pod and
// node. Only real nodes' pods answer (their IPs are reachable from the
// host); tests may add targets of their own with SetTargets.
func (w *World) startPrometheus(ctx context.Context, opts Options) error {
	dir, err := binDir(opts)
	if err != nil {
		return err
	}
	w.promDir, err = os.MkdirTemp("", "inplace-prometheus-")
	if err != nil {
		return fmt.Errorf("prometheus: %w", err)
	}
	po := opts.PrometheusOptions
	po.BinDir, po.Dir, po.Kubeconfig = dir, w.promDir, w.Cluster.Kubeconfig()
	if po.Logger == nil {
		po.Logger = opts.Logger
	}
	w.Prometheus, err = prom.Start(ctx, po)
	return err
}

func (w *World) stopPrometheus() error {
	w.Prometheus.Stop()
	if w.promDir == "" {
		return nil
	}
	return os.RemoveAll(w.promDir)
}
