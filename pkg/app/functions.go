package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/templatesync"
	"github.com/inplace-dev/inplace/pkg/watcher"
)

// sweepEvery is how often stale pre-pull pods are looked for.
const sweepEvery = time.Minute

// buildFunctions makes the functions p names, and the pod watcher.
func (a *App) buildFunctions(ctx context.Context, p *config.Process, pub watcher.Publisher, log *slog.Logger) error {
	if p.Runs(computespec.Name) {
		syncer := &templatesync.Syncer{Client: a.Kube, Recorder: kube.NewRecorder(ctx, a.Kube, "inplace-"+computespec.Name),
			Log: log.With("function", computespec.Name)}
		a.Functions = append(a.Functions, computespec.New(computespec.Deps{
			Cache: a.Cache, Store: a.KV, Defaults: a.Defaults, Syncer: syncer, Log: log.With("function", computespec.Name),
		}))
	}
	if p.Runs(prepull.Name) {
		f := prepull.New(prepull.Deps{Client: a.Kube, Config: a.Defaults, Log: log.With("function", prepull.Name)})
		a.Functions = append(a.Functions, f)
		a.Background = append(a.Background, func(ctx context.Context) { every(ctx, sweepEvery, f.Sweep, log) })
	}
	if p.Runs(patchpod.Name) {
		a.Functions = append(a.Functions, patchpod.New(patchpod.Deps{Client: a.Kube,
			Recorder: kube.NewRecorder(ctx, a.Kube, "inplace-"+patchpod.Name), Log: log.With("function", patchpod.Name)}))
	}
	if p.Runs(verify.Name) {
		a.Functions = append(a.Functions, verify.New(verify.Deps{Client: a.Kube, Config: a.Defaults,
			Recorder: kube.NewRecorder(ctx, a.Kube, "inplace-"+verify.Name), Log: log.With("function", verify.Name)}))
	}
	if p.WatchPods {
		w, err := watcher.New(a.Cache.PodInformer(), a.Kube, pub, watcher.Options{Log: log.With("function", "pod-watcher")})
		if err != nil {
			return err
		}
		a.Background = append(a.Background, func(ctx context.Context) {
			if err := w.Run(ctx); err != nil {
				log.Error("pod watcher stopped", "err", err)
			}
		})
	}
	return nil
}

// every runs fn each period until ctx ends, logging failures.
func every(ctx context.Context, period time.Duration, fn func(context.Context) error, log *slog.Logger) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := fn(ctx); err != nil {
				log.Warn("periodic task failed", "err", err)
			}
		}
	}
}

var _ watcher.Publisher = (*bus.Bus)(nil)
