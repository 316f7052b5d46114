package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/inputs/poll"
	"github.com/inplace-dev/inplace/pkg/inputs/receiver"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// App is an assembled process.
type App struct {
	Kube kubernetes.Interface
	// Events writes the Kubernetes Events, on its own rate budget.
	Events kubernetes.Interface
	Cache  *kube.Cache
	// Reader reads pods, owners and nodes from Cache for the functions
	// (nil in Knative mode: they GET).
	Reader    kube.Reader
	KV        *bus.KV
	Defaults  *config.Store
	Functions []runner.Function
	// Receiver serves /hooks/ when the process runs the receiver.
	Receiver http.Handler
	// Background are loops to run beside the functions until the context
	// ends: the pod watcher, the pre-pull sweep.
	Background []func(ctx context.Context)
	// registry takes the functions' own metrics (planned restarts); nil: none.
	registry prometheus.Registerer
	// leases hold each pod for one pod of patch-pod's or verify's Service
	// at a time in Knative mode (on the bus, each function's link has its
	// own); nil: none.
	leases *bus.Leases
}

// Build assembles what p asks for on the bus links l (each function on
// its identity's) and starts the informers and the configuration watch
// (they stop with ctx).
func Build(ctx context.Context, p *config.Process, l *links, reg prometheus.Registerer, log *slog.Logger) (*App, error) {
	a := &App{Defaults: config.NewStore(config.StandardDefaults(), log)}
	if p.Runs("receiver") {
		if err := a.buildReceiver(p, l.bus(busauth.Receiver), reg, log); err != nil {
			return nil, err
		}
	}
	if err := a.buildFleetMember(ctx, p, l, log); err != nil {
		return nil, err
	}
	if err := a.buildFleetHub(ctx, p, l, log); err != nil {
		return nil, err
	}
	if !needsKube(p) {
		return a, nil
	}
	if err := a.connectKube(ctx, p, log); err != nil {
		return nil, err
	}
	kv, err := l.bus(computespec.Name).KV(ctx)
	if err != nil {
		return nil, err
	}
	a.KV = kv
	a.registry = reg
	if reg != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "inplace", Name: "record_conflicts_total",
			Help: "Writes of a rollout record that lost the compare-and-swap to another writer and were made again.",
		}, func() float64 { return float64(kv.Conflicts()) }))
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "inplace", Name: "record_writes_total",
			Help: "Writes of a rollout record (each a whole record, for the bucket and every watcher of it).",
		}, func() float64 { return float64(kv.Writes()) }))
	}
	if err := a.buildFunctions(ctx, p, l, log); err != nil {
		return nil, err
	}
	// The informers' first LIST (every pod, decoded page by page) is the
	// process's peak; what it left behind is garbage the runtime would
	// hand back to the kernel only over minutes. Hand it back now, once.
	debug.FreeOSMemory()
	return a, nil
}

func needsKube(p *config.Process) bool {
	for _, f := range p.Functions {
		if f != "receiver" {
			return true
		}
	}
	return p.WatchPods
}

// connectKube makes the clients (the chain's, the Events') and starts only
// the informers the process's functions read, so each runs with no more
// RBAC than its own calls: the configuration watch for compute-spec,
// pre-pull and verify; pods for every function and the pod watcher;
// workloads for compute-spec, the poller, and the owner checks of
// patch-pod and verify; nodes for pre-pull and compute-spec.
func (a *App) connectKube(ctx context.Context, p *config.Process, log *slog.Logger) error {
	if err := a.clients(p); err != nil {
		return err
	}
	if p.Runs(computespec.Name) || p.Runs(prepull.Name) || p.Runs(verify.Name) || p.Runs(poll.Name) {
		if err := a.Defaults.Watch(ctx, a.Kube, p.Namespace); err != nil {
			return err
		}
	}
	workloads := p.Runs(computespec.Name) || p.Runs(poll.Name)
	pods := workloads || p.WatchPods
	if !pods && (p.Runs(patchpod.Name) || p.Runs(verify.Name) || p.Runs(prepull.Name)) {
		var err error
		if pods, workloads, err = a.mayCache(ctx, p, log); err != nil {
			return err
		}
	}
	var err error
	switch {
	case workloads:
		a.Cache, err = kube.NewCache(a.Kube, 10*time.Minute)
	case pods:
		a.Cache, err = kube.NewPodCache(a.Kube, 10*time.Minute)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	if p.Runs(prepull.Name) || p.Runs(computespec.Name) {
		a.Cache.WithNodes() // pre-pull and compute-spec read nodes' images
	}
	if p.Runs(patchpod.Name) {
		if err := a.watchSlices(ctx, log); err != nil {
			return err
		}
	}
	if err := a.Cache.Start(ctx); err != nil {
		return fmt.Errorf("kubernetes cache: %w", err)
	}
	a.Reader = a.Cache.Reader(a.Kube)
	log.Info("kubernetes cache synced")
	return nil
}

// watchSlices adds the EndpointSlice informer patch-pod reads and watches
// a draining pod's Services through, when the process may list and watch
// them everywhere; else patch-pod lists them while a pod drains.
func (a *App) watchSlices(ctx context.Context, log *slog.Logger) error {
	may, err := kube.MayWatchAll(ctx, a.Kube, "discovery.k8s.io/endpointslices")
	if err != nil {
		return err
	}
	if !may {
		log.Warn("no cluster-wide list and watch of EndpointSlices: patch-pod lists them while a pod drains")
		return nil
	}
	_, err = a.Cache.WithEndpointSlices()
	return err
}

// mayCache tells whether a process of pre-pull, patch-pod or verify alone
// may run the informers it would read: functions confined to some
// namespaces (inplace rbac-namespaced) cannot watch all pods, and then GET
// what they read.
func (a *App) mayCache(ctx context.Context, p *config.Process, log *slog.Logger) (pods, workloads bool, err error) {
	writers := p.Runs(patchpod.Name) || p.Runs(verify.Name)
	need := []string{"pods"}
	if writers {
		need = append(need, "apps/replicasets", "apps/deployments", "apps/statefulsets", "apps/daemonsets")
	}
	if p.Runs(prepull.Name) {
		need = append(need, "nodes")
	}
	may, err := kube.MayWatchAll(ctx, a.Kube, need...)
	if err != nil {
		return false, false, err
	}
	if !may {
		log.Warn("no cluster-wide list and watch of what the functions read: reading it with a GET each time", "resources", need)
	}
	return may, may && writers, nil
}

// clients makes the chain's client, with p's rate limit, and the Events'.
func (a *App) clients(p *config.Process) error {
	cfg, err := kube.RestConfig(p.Kubeconfig, float32(p.KubeQPS), p.KubeBurst)
	if err != nil {
		return err
	}
	if p.WrapTransport != nil {
		cfg.Wrap(p.WrapTransport)
	}
	if a.Kube, err = kube.Client(cfg); err != nil {
		return err
	}
	a.Events, err = kube.EventsClient(cfg, float32(p.EventsQPS), p.EventsBurst)
	return err
}

func (a *App) buildReceiver(p *config.Process, b *bus.Bus, reg prometheus.Registerer, log *slog.Logger) error {
	if p.HooksConfig == "" {
		log.Warn("receiver has no --hooks-config: no webhook route is served")
		return nil
	}
	cfg, err := receiver.LoadConfig(p.HooksConfig)
	if err != nil {
		return err
	}
	// A delivery older than the stream's dedup window is refused: within
	// it, the stream drops a replay by its event id.
	r, err := receiver.New(cfg, b, receiver.Options{Logger: log.With("function", "receiver"), Metrics: reg,
		MaxAge: p.Bus.DuplicateWindow(), TrustedProxies: p.TrustedProxies})
	if err != nil {
		return err
	}
	a.Receiver = r
	return nil
}
