package world

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/hollow"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/prom"
	"github.com/inplace-dev/inplace/test/realnode"
	"github.com/inplace-dev/inplace/test/registry"
)

// Options configure a world. The zero value gives 3 fast nodes.
type Options struct {
	// Cluster, when set, is an already running control plane to use (and
	// not stop); otherwise Start starts one with ClusterOptions.
	Cluster        *cluster.Cluster
	ClusterOptions cluster.Options
	// Registry options (Notify, Dir); the logger defaults to Logger. On
	// real nodes the registry is runnable: a push makes a program image.
	RegistryOptions registry.Options
	// Registry, when set, is an already running registry to use (and not
	// close) instead of starting one: the worlds of a fleet share one.
	Registry *registry.Registry
	// Kubelet options; Resolver is the world's registry unless set, the
	// logger defaults to Logger.
	KubeletOptions kubelet.Options
	// Nodes is the node mode: NodesSimulated, NodesHollow or NodesReal;
	// default the INPLACE_NODES environment variable, else simulated.
	Nodes NodeMode
	// Prometheus starts a real Prometheus scraping the world's annotated
	// pods (World.Prometheus); PrometheusOptions tune it (the scrape
	// interval, targets of the test's own).
	Prometheus        bool
	PrometheusOptions prom.Options
	// KubeletVerbosity is the real kubelets' log level (--v) on real
	// nodes; 0 leaves the kubelet's default.
	KubeletVerbosity int
	// Logger receives progress messages; default discards them.
	Logger *slog.Logger
}

// World is a running test world.
type World struct {
	Cluster  *cluster.Cluster
	Registry *registry.Registry
	// Kubelet is the pool of simulated nodes (nil on hollow nodes).
	Kubelet *kubelet.Kubelet
	// Hollow is the pool of hollow nodes and kube-scheduler (nil on
	// simulated nodes).
	Hollow *hollow.Nodes
	// Real is the pool of real nodes and RealHost the machine prepared for
	// it (nil on other modes).
	Real     *realnode.Nodes
	RealHost *realnode.Host
	// Mode is the node mode the world runs.
	Mode NodeMode
	// Prometheus scrapes the world's pods when Options.Prometheus asked
	// for it (nil otherwise).
	Prometheus *prom.Server
	promDir    string

	ownCluster  bool
	ownRegistry bool
	timings     Timings
}

// Timings are how long the parts of Start took. Host is the machine's
// preparation for real nodes (0 on other modes).
type Timings struct {
	Host, ControlPlane, Registry, Nodes, Total time.Duration
}

// Start brings up the control plane (unless given), the registry and the
// nodes, and returns once the nodes are Ready and schedulable (on real
// nodes, also the cluster networking).
func Start(ctx context.Context, opts Options) (*World, error) {
	t0 := time.Now()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := mode(opts)
	if err != nil {
		return nil, fmt.Errorf("start world: %w", err)
	}
	w := &World{Cluster: opts.Cluster, Mode: m}
	if m == NodesReal {
		if err := w.prepareReal(ctx, &opts); err != nil {
			w.Stop()
			return nil, fmt.Errorf("start world: %w", err)
		}
		w.timings.Host = time.Since(t0)
	}
	tc := time.Now()
	if w.Cluster == nil {
		co := opts.ClusterOptions
		if co.Logger == nil {
			co.Logger = opts.Logger
		}
		c, err := cluster.Start(ctx, co)
		if err != nil {
			w.Stop()
			return nil, fmt.Errorf("start world: %w", err)
		}
		w.Cluster, w.ownCluster = c, true
	}
	w.timings.ControlPlane = time.Since(tc)
	if err := w.startRest(ctx, opts); err != nil {
		w.Stop()
		return nil, fmt.Errorf("start world: %w", err)
	}
	w.timings.Total = time.Since(t0)
	opts.Logger.Info("test world ready", "controlPlane", w.timings.ControlPlane,
		"registry", w.timings.Registry, "nodes", w.timings.Nodes, "total", w.timings.Total)
	return w, nil
}

func (w *World) startRest(ctx context.Context, opts Options) error {
	t := time.Now()
	if err := w.startRegistry(ctx, opts); err != nil {
		return err
	}
	w.timings.Registry = time.Since(t)
	t = time.Now()
	if err := w.startNodes(ctx, opts); err != nil {
		return err
	}
	w.timings.Nodes = time.Since(t)
	if opts.Prometheus {
		return w.startPrometheus(ctx, opts)
	}
	return nil
}

func (w *World) startRegistry(ctx context.Context, opts Options) error {
	if opts.Registry != nil {
		w.Registry = opts.Registry
		return nil
	}
	ro := opts.RegistryOptions
	if ro.Logger == nil {
		ro.Logger = opts.Logger
	}
	if w.Mode == NodesReal {
		ro.Runnable = true
	}
	reg, err := registry.Start(ctx, ro)
	if err != nil {
		return err
	}
	w.Registry, w.ownRegistry = reg, true
	return nil
}

// kubeletClient is the simulated nodes' own client: real kubelets each
// have one (50 QPS by default), so the pool gets a budget its size.
func (w *World) kubeletClient() kubernetes.Interface {
	rc := w.Cluster.RestConfig()
	rc.QPS, rc.Burst = 1000, 2000
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.UserAgent = "inplace-simulated-kubelet"
	return kubernetes.NewForConfigOrDie(rc)
}

// Stop tears the world down: nodes, registry, then the control plane if
// Start started it. Safe to call on a partly started world.
func (w *World) Stop() error {
	var errs []error
	errs = append(errs, w.stopPrometheus())
	if w.Kubelet != nil {
		w.Kubelet.Stop()
	}
	if w.Hollow != nil {
		w.Hollow.Stop()
	}
	if w.Real != nil {
		w.Real.Stop()
	}
	if w.Registry != nil && w.ownRegistry {
		errs = append(errs, w.Registry.Close())
	}
	if w.ownCluster {
		w.Cluster.Stop()
	}
	if w.RealHost != nil {
		errs = append(errs, w.RealHost.Close())
	}
	return errors.Join(errs...)
}

// Client is an admin clientset of the world's API server.
func (w *World) Client() kubernetes.Interface { return w.Cluster.Client() }

// RestConfig is a copy of the admin client config.
func (w *World) RestConfig() *rest.Config { return w.Cluster.RestConfig() }

// NewNamespace creates a namespace for the test, deleted when it ends.
func (w *World) NewNamespace(t testing.TB) string {
	t.Helper()
	return w.Cluster.NewNamespace(t)
}

// StartTimings says how long each part of Start took.
func (w *World) StartTimings() Timings { return w.timings }
