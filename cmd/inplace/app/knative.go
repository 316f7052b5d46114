package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// KnativeFunctions are the functions a Knative Service may run: every
// function of the chain but the receiver, which is no CloudEvents function.
var KnativeFunctions = []string{computespec.Name, prepull.Name, patchpod.Name, verify.Name}

// BuildKnative assembles the functions p names for Knative mode, where
// events arrive over HTTP from a Broker (the module root's func-go function)
// instead of from the bus. Nothing consumes from NATS: compute-spec dials
// p.NATSURL for its rollout state in the KV bucket, patch-pod and verify to
// check their writes against it. The informer
// cache starts only for compute-spec, and the configuration watch only for
// the functions that read it, so each function needs no more RBAC than its
// own calls. The pod watcher never runs here (an ApiServerSource feeds
// verify instead). The returned func releases NATS; the informers,
// recorders and a.Background loops stop with ctx, which the caller runs
// a.Background under.
func BuildKnative(ctx context.Context, p *config.Process, log *slog.Logger) (*App, func(), error) {
	for _, f := range p.Functions {
		if !slices.Contains(KnativeFunctions, f) {
			return nil, nil, fmt.Errorf("knative: --functions: %q cannot run behind HTTP; want some of %v", f, KnativeFunctions)
		}
	}
	a := &App{Defaults: config.NewStore(config.StandardDefaults(), log)}
	if err := a.clients(p); err != nil {
		return nil, nil, err
	}
	var err error
	if p.Runs(computespec.Name) || p.Runs(prepull.Name) || p.Runs(verify.Name) {
		if err := a.Defaults.Watch(ctx, a.Kube, p.Namespace); err != nil {
			return nil, nil, err
		}
	}
	closeKV := func() {}
	if p.Runs(computespec.Name) {
		if err := a.startCache(ctx, log); err != nil {
			return nil, nil, err
		}
	}
	if p.Runs(computespec.Name) || p.Runs(patchpod.Name) || p.Runs(verify.Name) {
		var nc *nats.Conn
		if a.KV, nc, err = openKV(ctx, p); err != nil {
			return nil, nil, err
		}
		closeKV = nc.Close
		if a.leases, err = knativeLeases(ctx, nc, p, log); err != nil {
			closeKV()
			return nil, nil, err
		}
	}
	knative := *p
	knative.WatchPods = false
	if err := a.buildFunctions(ctx, &knative, nil, log); err != nil {
		closeKV()
		return nil, nil, err
	}
	return a, closeKV, nil
}

func (a *App) startCache(ctx context.Context, log *slog.Logger) error {
	var err error
	if a.Cache, err = kube.NewCache(a.Kube, 10*time.Minute); err != nil {
		return err
	}
	if err := a.Cache.Start(ctx); err != nil {
		return fmt.Errorf("kubernetes cache: %w", err)
	}
	log.Info("kubernetes cache synced")
	return nil
}

// openKV dials NATS for the rollout bucket alone: Knative mode consumes
// nothing from the stream, so it does not set one up. compute-spec creates
// the bucket; patch-pod and verify only read it, so they bind to it. The
// connection is the caller's to close.
func openKV(ctx context.Context, p *config.Process) (*bus.KV, *nats.Conn, error) {
	if p.NATSURL == "" {
		return nil, nil, fmt.Errorf("knative: --nats-url (INPLACE_NATS_URL): compute-spec keeps rollout state in NATS KV, " +
			"and patch-pod and verify check every write against it: they need a NATS server")
	}
	opts, err := knativeDial(p)
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(p.NATSURL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("knative: connect to NATS %s: %w", p.NATSURL, err)
	}
	open := bus.BindKV
	if p.Runs(computespec.Name) && p.NATSCredentials == "" {
		open = bus.OpenKV // with identities, the operator made the bucket
	}
	kv, err := open(ctx, nc, p.Bus)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return kv, nc, nil
}

// knativeLeases opens the pod leases for patch-pod and verify: Knative
// scales a function's Service to several pods, which take deliveries for
// one pod at once just as replicas on the bus do. The leases are taken as
// the function's own NATS identity, so a Service running several functions
// under one identity (compute-spec's) goes without them; its guarded writes
// still keep each pod right. nil: no leases.
func knativeLeases(ctx context.Context, nc *nats.Conn, p *config.Process, log *slog.Logger) (*bus.Leases, error) {
	if !p.Runs(patchpod.Name) && !p.Runs(verify.Name) {
		return nil, nil
	}
	if p.NATSCredentials != "" && len(p.Functions) > 1 {
		log.Info("no pod leases: several functions share one NATS identity here; run patch-pod and verify as Services of their own to share pods between their replicas")
		return nil, nil
	}
	return bus.OpenLeases(ctx, nc, p.Bus, p.NATSCredentials != "")
}

// knativeDial are the connection options of the service: with
// --nats-credentials, the identity of its function (compute-spec's when it
// runs several: it may read what patch-pod and verify read).
func knativeDial(p *config.Process) ([]nats.Option, error) {
	clientTLS, _, err := tlsConfigs(&config.Process{NATSURL: p.NATSURL, NATSTLSCA: p.NATSTLSCA,
		NATSTLSCert: p.NATSTLSCert, NATSTLSKey: p.NATSTLSKey})
	if err != nil {
		return nil, err
	}
	opts := append([]nats.Option{nats.Name("inplace-" + strings.Join(p.Functions, ",")), nats.MaxReconnects(-1)}, clientTLS...)
	if p.NATSCredentials == "" {
		return opts, nil
	}
	id := p.Functions[0]
	if p.Runs(computespec.Name) {
		id = computespec.Name
	}
	own, err := busauth.Dial(p.NATSCredentials, id)
	if err != nil {
		return nil, fmt.Errorf("knative: %w", err)
	}
	return append(opts, own...), nil
}
