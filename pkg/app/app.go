package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/busauth"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/poll"
	"github.com/inplace-dev/inplace/pkg/receiver"
	"github.com/inplace-dev/inplace/pkg/runner"
)

// App is an assembled process.
type App struct {
	Kube      kubernetes.Interface
	Cache     *kube.Cache
	KV        *bus.KV
	Defaults  *config.Store
	Functions []runner.Function
	// Receiver serves /hooks/ when the process runs the receiver.
	Receiver http.Handler
	// Background are loops to run beside the functions until the context
	// ends: the pod watcher, the pre-pull sweep.
	Background []func(ctx context.Context)
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
	if err := a.buildFunctions(ctx, p, l, log); err != nil {
		return nil, err
	}
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

// connectKube makes the client and starts only what the process's
// functions read, so each runs with no more RBAC than its own calls: the
// configuration watch for compute-spec, pre-pull and verify; the workload
// cache for compute-spec; a pod cache alone for the pod watcher elsewhere.
func (a *App) connectKube(ctx context.Context, p *config.Process, log *slog.Logger) error {
	cfg, err := kube.RestConfig(p.Kubeconfig, 100, 200)
	if err != nil {
		return err
	}
	if a.Kube, err = kube.Client(cfg); err != nil {
		return err
	}
	if p.Runs(computespec.Name) || p.Runs(prepull.Name) || p.Runs(verify.Name) || p.Runs(poll.Name) {
		if err := a.Defaults.Watch(ctx, a.Kube, p.Namespace); err != nil {
			return err
		}
	}
	switch {
	case p.Runs(computespec.Name) || p.Runs(poll.Name):
		a.Cache, err = kube.NewCache(a.Kube, 10*time.Minute)
	case p.WatchPods:
		a.Cache, err = kube.NewPodCache(a.Kube, 10*time.Minute)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	if err := a.Cache.Start(ctx); err != nil {
		return fmt.Errorf("kubernetes cache: %w", err)
	}
	log.Info("kubernetes cache synced")
	return nil
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
		MaxAge: p.Bus.DuplicateWindow()})
	if err != nil {
		return err
	}
	a.Receiver = r
	return nil
}
