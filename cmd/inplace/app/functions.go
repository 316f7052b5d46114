package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/prometheus/client_golang/prometheus"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/metrics"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/inputs/keychain"
	"github.com/inplace-dev/inplace/pkg/inputs/poll"
	promquery "github.com/inplace-dev/inplace/pkg/inputs/prometheus"
	"github.com/inplace-dev/inplace/pkg/inputs/signature"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
	"github.com/inplace-dev/inplace/pkg/kube/reconfig"
	"github.com/inplace-dev/inplace/pkg/kube/templatesync"
	"github.com/inplace-dev/inplace/pkg/kube/watcher"
)

// sweepEvery is how often stale pre-pull pods are looked for.
const sweepEvery = time.Minute

// FunctionDeps are what the functions run against.
type FunctionDeps struct {
	Kube kubernetes.Interface
	// EventsClient writes the Kubernetes Events (its own rate budget);
	// nil: Kube.
	EventsClient kubernetes.Interface
	// Reader reads pods, owners and nodes for pre-pull, patch-pod and
	// verify (the process's cache); nil: they GET through Kube.
	Reader kube.Reader
	Cache  computespec.Cache
	// Store holds the rollout records: compute-spec writes them; patch-pod
	// and verify check every write against them, through Records[their
	// name] when set (in `inplace run` the process's one watched copy),
	// else through Store.
	Store   controller.Store
	Records map[string]guard.Records
	// Leases hold each pod for one replica of patch-pod and of verify at a
	// time, and have one replica of pre-pull warm (bus.Leader) (their own
	// connection, by name); none: one process only.
	Leases map[string]*bus.Leases
	// OptIn keeps the owners the admission policy lets the functions write
	// pods of; nil for dry runs.
	OptIn    controller.OptIn
	Defaults *config.Store
	// Events records Kubernetes Events on pods and workloads; off for dry runs.
	Events bool
	Log    *slog.Logger
	// Publish, when set, puts what compute-spec's watchdog emits on the
	// bus, every WatchdogPeriod; without it no watchdog runs (dry runs).
	Publish        func(ctx context.Context, e cloudevents.Event) error
	WatchdogPeriod time.Duration
	// Measurer measures the canary analyses' queries (Prometheus); nil: a
	// rollout asking for an analysis halts inconclusive.
	Measurer controller.Measurer
	// Registry takes the functions' own metrics (patch-pod's planned
	// restarts); nil registers none.
	Registry prometheus.Registerer
	// WatchRollouts, when set, feeds pre-pull every rollout record as it
	// changes (bus.Watched.WatchLatest from the process's copy of the
	// records, else bus.KV.WatchLatest as pre-pull's identity: the newest
	// revision of each record, those a newer one replaced while pre-pull
	// was busy skipped), so it pre-pulls on every node of a rollout at
	// once; nil: only as pods are planned. With Leases[pre-pull] only the
	// replica holding pre-pull's lease watches.
	WatchRollouts func(ctx context.Context, fn func(key string, rev uint64, value []byte)) error
	// Informers are the process's informers (nodes included). With
	// Publish, compute-spec plans a pod only once its node has the images
	// (pre-pull pulls ahead on every node) and its waiting rollouts are
	// woken by them (a pull ended, a pod became Ready); nil: neither.
	Informers *kube.Cache
	// WatchRecords, when set, feeds compute-spec every rollout record as
	// it changes (in `inplace run` bus.Watched.Watch, from the watch of
	// the process's copy of the records): a delivery waiting for another
	// worker's change of a record is woken by it.
	WatchRecords func(ctx context.Context, fn func(key string, value []byte)) error
	// Workers is how many events of one function are handled at once:
	// patch-pod waits on the watch in at most half of them.
	Workers int
}

// Functions makes the named functions of the chain, and the loops they
// need beside them (the pre-pull sweep).
func Functions(ctx context.Context, names []string, d FunctionDeps) ([]runner.Function, []func(context.Context)) {
	var fns []runner.Function
	var loops []func(context.Context)
	decoded := &rollout.Decoded{} // compute-spec and the guards share their decodes
	recorder := func(name string) kube.Recorder {
		if !d.Events {
			return nil
		}
		return kube.NewRecorder(ctx, cmp.Or[kubernetes.Interface](d.EventsClient, d.Kube), "inplace-"+name)
	}
	if slices.Contains(names, computespec.Name) {
		rec := recorder(computespec.Name)
		ro, more := rolloutController(d, rec, decoded)
		loops = append(loops, more...)
		fns = append(fns, computespec.New(ro, computespec.Deps{Cache: d.Cache, Store: d.Store, Defaults: d.Defaults,
			Signatures: &signature.Verifier{Secrets: keychain.ClientSecrets{Client: d.Kube}},
			Dates:      &poll.Dater{Secrets: keychain.ClientSecrets{Client: d.Kube}},
			Recorder:   rec, Log: d.Log.With("function", computespec.Name)}))
	}
	if slices.Contains(names, prepull.Name) {
		pd := prepull.Deps{Client: d.Kube, Reader: d.Reader, Config: d.Defaults, Log: d.Log.With("function", prepull.Name), Decoded: decoded}
		if d.Informers != nil { // a pull's progress wakes its waiting deliveries
			keys := &notify.Keys{}
			if _, err := d.Informers.PodInformer().AddEventHandler(prepull.Watch(keys)); err != nil {
				d.Log.Error("pre-pull pods not watched: pulls are looked at every second", "err", err)
			} else {
				pd.Changes = keys
			}
			pd.Reports = pullReports(ctx, d, keys)
			pd.Running = d.Informers // a pod running the image on the node proves it there
		}
		f := prepull.New(pd)
		fns = append(fns, f)
		loops = append(loops, func(ctx context.Context) { wait.UntilWithContext(ctx, logFailure(f.Sweep, d.Log), sweepEvery) })
		if d.WatchRollouts != nil {
			warm := func(ctx context.Context) {
				watch(ctx, d.WatchRollouts, func(k string, rev uint64, v []byte) { f.Warm(ctx, k, rev, v) }, d.Log)
			}
			if l := d.Leases[prepull.Name]; l != nil {
				// One replica warms, the lease holder: each would decode
				// every record for pulls the holder starts anyway. A
				// replica that takes the lease watches from each record's
				// newest revision, so nothing written meanwhile is missed.
				leader := bus.Leader{Leases: l, Name: prepull.Name, Hold: warmHold, Log: d.Log.With("function", prepull.Name)}
				loops = append(loops, func(ctx context.Context) { leader.Run(ctx, warm) })
			} else {
				loops = append(loops, warm)
			}
		}
	}
	guardFor := func(fn string) *guard.Guard {
		g := &guard.Guard{Client: d.Kube, Records: d.Store, Decoded: decoded}
		if r := d.Records[fn]; r != nil {
			g.Records = r
		}
		if d.Reader != nil {
			g.Owners = d.Reader
		}
		return g
	}
	if slices.Contains(names, patchpod.Name) {
		pd := patchpod.Deps{Client: d.Kube, Reader: d.Reader, Guard: guardFor(patchpod.Name), Recorder: recorder(patchpod.Name),
			Log: d.Log.With("function", patchpod.Name)}
		if l := d.Leases[patchpod.Name]; l != nil {
			pd.Leases = l
		}
		if d.Registry != nil {
			pd.Restarts = metrics.NewPlannedRestarts(d.Registry)
		}
		watchDrains(&pd, d)
		fns = append(fns, patchpod.New(pd))
	}
	if slices.Contains(names, verify.Name) {
		vd := verify.Deps{Client: d.Kube, Reader: d.Reader, Guard: guardFor(verify.Name), Config: d.Defaults, Recorder: recorder(verify.Name),
			Log: d.Log.With("function", verify.Name)}
		if l := d.Leases[verify.Name]; l != nil {
			vd.Leases = l
		}
		if d.Informers != nil && d.Reader != nil { // a pod.patched ahead of the cache waits for it
			keys := &notify.Keys{}
			if _, err := d.Informers.PodInformer().AddEventHandler(verify.WatchPods(keys)); err != nil {
				d.Log.Error("pods not watched by verify: an input ahead of the cache reads the pod from the API server", "err", err)
			} else {
				vd.Changes = keys
			}
		}
		fns = append(fns, verify.New(vd))
	}
	return fns, loops
}

// rolloutController makes the rollout controller compute-spec begins
// rollouts on, and the loops that run beside it: the watch of the records,
// the watchdog (with Publish) and the wake-ups (with Publish and the
// informers).
func rolloutController(d FunctionDeps, rec kube.Recorder, decoded *rollout.Decoded) (*controller.Rollouts, []func(context.Context)) {
	var loops []func(context.Context)
	log := d.Log.With("function", computespec.Name)
	syncer := &templatesync.Syncer{Client: d.Kube, Recorder: rec, Log: log}
	cd := controller.Deps{Cache: d.Cache, Store: d.Store, Defaults: d.Defaults,
		Syncer: syncer, Recorder: rec, OptIn: d.OptIn, Log: log, Decoded: decoded, Measurer: d.Measurer, Workers: d.Workers}
	cd.Fresh = kube.Live{Client: d.Kube}
	if r, ok := d.Records[computespec.Name].(controller.RecordReader); ok {
		cd.Reads = r // observes and confirms outcomes on a watched copy
	}
	if d.Reader != nil {
		cd.Pods = d.Reader
	}
	wakes := d.Publish != nil && d.Informers != nil
	if wakes {
		cd.Pulls = d.Informers
	}
	if d.WatchRecords != nil {
		cd.Records = &controller.RecordChanges{}
		loops = append(loops, func(ctx context.Context) { watch(ctx, d.WatchRecords, cd.Records.Notify, d.Log) })
	}
	ro := controller.New(cd)
	if d.Publish != nil {
		loops = append(loops, func(ctx context.Context) {
			wait.UntilWithContext(ctx, logFailure(watchdog(ro, d.Publish), d.Log), d.WatchdogPeriod)
		})
	}
	if wakes {
		w, err := controller.NewWaker(ro, d.Informers, d.Publish, log)
		if err != nil {
			d.Log.Error("compute-spec's wake-ups not watched: rollouts wait for their safety-net rechecks", "err", err)
		} else {
			loops = append(loops, w.Run)
		}
	}
	return ro, loops
}

// watchDrains has patch-pod read the EndpointSlices from the process's
// cache, when it holds them, and wakes its waiting deliveries when their
// pod or its EndpointSlices change: a drained pod is patched as soon as
// the watch shows it out of service. Without a slice informer the slices
// are listed, every 250ms while a pod drains.
func watchDrains(pd *patchpod.Deps, d FunctionDeps) {
	if d.Informers == nil {
		return
	}
	keys := &notify.Keys{}
	if _, err := d.Informers.PodInformer().AddEventHandler(patchpod.WatchPods(keys)); err != nil {
		d.Log.Error("pods not watched by patch-pod: draining pods are looked at every 250ms", "err", err)
		return
	}
	pd.Changes = keys
	if d.Workers > 0 {
		pd.Waiters = max(1, d.Workers/2)
	}
	sr, ok := d.Reader.(kube.SliceReader)
	if si := d.Informers.SliceInformer(); si != nil && ok {
		if _, err := si.AddEventHandler(patchpod.WatchSlices(keys)); err == nil {
			pd.Slices = sr
			return
		}
	}
	pd.DrainRecheck = 250 * time.Millisecond // the slices are not watched: poll them
}

// buildFunctions makes the functions p names, and the pod watcher.
func (a *App) buildFunctions(ctx context.Context, p *config.Process, l *links, log *slog.Logger) error {
	d := FunctionDeps{Workers: p.Workers, Kube: a.Kube, EventsClient: a.Events, Reader: a.Reader, Cache: a.Cache, Informers: a.Cache, Store: a.KV, Defaults: a.Defaults, Events: true, Log: log,
		WatchdogPeriod: p.WatchdogPeriod, Records: map[string]guard.Records{}, Leases: map[string]*bus.Leases{}, Registry: a.registry,
		OptIn: &kube.OptedIn{Client: a.Kube, Namespace: p.Namespace, Log: log}}
	if p.PrometheusURL != "" {
		c, err := promquery.New(promquery.Config{URL: p.PrometheusURL})
		if err != nil {
			return fmt.Errorf("--prometheus-url: %w", err)
		}
		d.Measurer = c
	}
	if l != nil { // each function publishes as itself
		d.Publish = l.bus(computespec.Name).Publish
		if err := a.readRecords(ctx, p, l, &d, log); err != nil {
			return err
		}
		if p.Runs(prepull.Name) {
			if d.WatchRollouts == nil { // no copy of the records: a watch of its own
				kv, err := l.bus(prepull.Name).KV(ctx)
				if err != nil {
					return err
				}
				d.WatchRollouts = kv.WatchLatest
			}
			leases, err := l.bus(prepull.Name).Leases(ctx)
			if err != nil {
				return err
			}
			d.Leases[prepull.Name] = leases
		}
		for _, fn := range []string{patchpod.Name, verify.Name} {
			if p.Runs(fn) {
				leases, err := l.bus(fn).Leases(ctx)
				if err != nil {
					return err
				}
				d.Leases[fn] = leases
			}
		}
	}
	if l == nil && a.leases != nil { // Knative mode
		d.Leases[patchpod.Name], d.Leases[verify.Name] = a.leases, a.leases
	}
	fns, loops := Functions(ctx, p.Functions, d)
	a.Functions = append(a.Functions, fns...)
	a.Background = append(a.Background, loops...)
	if p.Runs(poll.Name) {
		a.Background = append(a.Background, a.poller(l.bus(busauth.Poller), log).Run)
	}
	if p.Runs(computespec.Name) && l != nil {
		if err := a.WatchConfigChanges(ctx, l.bus(computespec.Name), log); err != nil {
			return err
		}
	}
	if p.WatchPods {
		b := l.bus(busauth.PodWatcher)
		leases, err := b.Leases(ctx)
		if err != nil {
			return err
		}
		wlog := log.With("function", "pod-watcher")
		// One replica publishes each pod change: the others' copies would
		// be dropped by the stream's dedup window, after their encoding.
		leader := bus.Leader{Leases: leases, Name: busauth.PodWatcher, Hold: watcherHold, Log: wlog}
		w, err := watcher.New(a.Cache.PodInformer(), a.Kube, watcherPublisher(b, a.registry), watcher.Options{Workers: max(2, p.Workers/2), Log: wlog, Leader: leader})
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

// readRecords gives the process's readers of the rollout records one
// watched copy of them (bus.Watched), fed by one watch: compute-spec reads
// a record for each outcome and is woken by its changes (WatchRecords),
// patch-pod and verify check every step of every pod against its record,
// and a record holds every pod, so each revision crossing the connection
// once per reader would cost each replica as much again per reader. The
// watch is compute-spec's when the process runs it (its writes go by
// compare-and-swap on the bucket itself), else patch-pod's or verify's:
// each of them may read the whole bucket, and the cache serves reads only.
// Pre-pull's warming, when the process runs it, takes its records from
// the copy too (WatchRollouts).
func (a *App) readRecords(ctx context.Context, p *config.Process, l *links, d *FunctionDeps, log *slog.Logger) error {
	var readers []string
	for _, fn := range []string{computespec.Name, patchpod.Name, verify.Name} {
		if p.Runs(fn) {
			readers = append(readers, fn)
		}
	}
	if len(readers) == 0 {
		return nil
	}
	kv := a.KV
	if readers[0] != computespec.Name || kv == nil {
		var err error
		if kv, err = l.bus(readers[0]).KV(ctx); err != nil {
			return err
		}
	}
	cache := bus.NewWatched(kv)
	for _, fn := range readers {
		d.Records[fn] = cache
	}
	if p.Runs(computespec.Name) {
		d.WatchRecords = cache.Watch
	}
	if p.Runs(prepull.Name) {
		d.WatchRollouts = cache.WatchLatest
	}
	a.Background = append(a.Background, func(ctx context.Context) {
		watch(ctx, func(ctx context.Context, _ struct{}) error { return cache.Run(ctx) }, struct{}{}, log)
	})
	return nil
}

// watcherHold is how long the pod watcher's lease lasts unless renewed: a
// killed leader's replacement starts publishing within it (plus a look,
// watcherHold/3).
const watcherHold = 10 * time.Second

// warmHold is how long pre-pull's warming lease lasts unless renewed: a
// killed holder's replacement starts warming within it (plus a look,
// warmHold/3); the planned pods' own pre-pulls go on meanwhile.
const warmHold = 10 * time.Second

// poller asks the registries for the tags opted-in workloads could move
// to, as the cluster shows them now.
func (a *App) poller(pub watcher.Publisher, log *slog.Logger) *poll.Poller {
	return poll.New(poll.Deps{
		Watches: func() ([]poll.Watch, error) { return poll.FromCluster(a.Cache, a.Defaults.Load().Policy) },
		Secrets: keychain.ClientSecrets{Client: a.Kube}, Publish: pub.Publish, Log: log.With("function", poll.Name),
	})
}

// watchdog is one sweep of the rollout controller's watchdog, its events published.
func watchdog(ro *controller.Rollouts, publish func(context.Context, cloudevents.Event) error) func(context.Context) error {
	return func(ctx context.Context) error {
		outs, err := ro.Sweep(ctx)
		for _, e := range outs {
			if perr := publish(ctx, e); perr != nil {
				return errors.Join(err, fmt.Errorf("watchdog: publish %s: %w", e.Type(), perr))
			}
		}
		return err
	}
}

// watch runs a KV watch until ctx ends, starting it again (after a
// back-off) when it fails: the bucket not made yet, NATS restarting.
func watch[F any](ctx context.Context, w func(context.Context, F) error, fn F, log *slog.Logger) {
	for ctx.Err() == nil {
		if err := w(ctx, fn); err != nil && ctx.Err() == nil {
			log.Warn("rollout watch failed; starting it again", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(watchBackoff):
			}
		}
	}
}

// watchBackoff is the wait before a failed watch starts again.
const watchBackoff = 2 * time.Second

// logFailure adapts a periodic task for wait.UntilWithContext: a failure
// is logged, and the next period tries again.
func logFailure(fn func(context.Context) error, log *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		if err := fn(ctx); err != nil {
			log.Warn("periodic task failed", "err", err)
		}
	}
}

var _ watcher.Publisher = (*bus.Bus)(nil)

// WatchConfigChanges adds the watcher of ConfigMaps (and Secrets, when
// allowed) that publishes restart requests to pub for the workloads asking
// for inplace.dev/restart-on-change (pkg/kube/reconfig). It runs beside
// compute-spec, reading the workloads from its cache: on the bus pub is
// compute-spec's link; in Knative mode, the Broker (K_SINK).
func (a *App) WatchConfigChanges(ctx context.Context, pub reconfig.Publisher, log *slog.Logger) error {
	if a.Cache == nil {
		return fmt.Errorf("reconfig: compute-spec's informer cache is not running")
	}
	rlog := log.With("function", "reconfig")
	secrets := reconfig.CanWatchSecrets(ctx, a.Kube)
	if !secrets {
		rlog.Info("Secrets are not watched (no list/watch on secrets; config/optional/reconfig-secrets.yaml grants it): inplace.dev/restart-on-change acts on ConfigMaps only")
	}
	rw, err := reconfig.New(a.Kube, reconfig.Listers{Deployments: a.Cache.Deployments,
		StatefulSets: a.Cache.StatefulSets, DaemonSets: a.Cache.DaemonSets}, pub, secrets, rlog)
	if err != nil {
		return err
	}
	a.Background = append(a.Background, rw.Run)
	return nil
}

// pullReports runs an informer of the kubelet's Pulled Events in the
// pre-pull namespace (as configured at start), waking keys' node at each:
// a pre-pull then counts done at the pull's end. Nil when it cannot.
func pullReports(ctx context.Context, d FunctionDeps, keys *notify.Keys) prepull.Reports {
	inf, err := prepull.NewEventInformer(d.Kube, d.Defaults.Load().PrepullNamespace)
	if err == nil {
		_, err = inf.AddEventHandler(prepull.WatchEvents(keys))
	}
	if err != nil {
		d.Log.Error("the kubelet's pull Events not watched: a pre-pull counts done when its pod's status shows it", "err", err)
		return nil
	}
	go inf.Run(ctx.Done())
	return prepull.EventReports{Informer: inf}
}
