package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// The shop: one image, used by a gated Deployment and a StatefulSet.
const (
	repo     = "shop/app"
	oldTag   = "1.4.2"
	newTag   = "1.5.0"
	shopNS   = "shop"
	webPods  = 4
	cartPods = 3
)

// run is the demo; in Knative mode (knativeMode) the chain runs behind a
// real Knative Broker instead of `inplace run`.
func run(ctx context.Context, out io.Writer, knativeMode bool) error {
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	opts := world.Options{}
	if knativeMode {
		opts.Nodes = world.NodesSimulated // see knative.Main
	}
	nodes, err := describeNodes(opts)
	if err != nil {
		return err
	}
	say("▶ starting the test world: etcd, kube-apiserver, kube-controller-manager, %s, an OCI registry", nodes)
	w, err := world.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	t := w.StartTimings()
	say("  ready in %s (control plane %s)", t.Total.Round(time.Millisecond), t.ControlPlane.Round(time.Millisecond))
	sh := &shop{w: w, out: out}
	var stop func()
	if knativeMode {
		stop, err = sh.startKnative(ctx)
	} else {
		stop, err = sh.startRun(ctx)
	}
	if err != nil {
		return err
	}
	defer stop()
	return sh.demo(ctx)
}

// startRun starts `inplace run` on the world.
func (sh *shop) startRun(ctx context.Context) (func(), error) {
	dir, err := os.MkdirTemp("", "inplace-demo-")
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(sh.out, "▶ starting inplace run: embedded NATS JetStream, receiver, compute-spec, pre-pull, patch-pod, verify, pod watcher")
	s, err := stack.Start(ctx, sh.w, stack.Options{Dir: dir, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fmt.Fprintf(sh.out, "  receiver at %s, NATS at %s\n", s.HooksURL, s.NATSURL)
	sh.s = s
	return func() { s.Stop(); os.RemoveAll(dir) }, nil
}

// demo deploys the shop, pushes, follows the rollout and shows the result.
func (sh *shop) demo(ctx context.Context) error {
	say := func(format string, args ...any) { fmt.Fprintf(sh.out, format+"\n", args...) }
	w := sh.w
	if err := sh.deploy(ctx); err != nil {
		return err
	}
	before, err := sh.snapshot(ctx)
	if err != nil {
		return err
	}
	say("▶ pushing %s:%s to the registry; its webhook starts the rollout (events below, live)", repo, newTag)
	lines, stopTail := sh.tail(ctx)
	digest, err := w.Registry.Push(ctx, repo, newTag)
	if err != nil {
		return err
	}
	done, err := sh.waitRollouts(ctx, 3*time.Minute)
	stopTail()
	<-lines
	if err != nil {
		return err
	}
	after, err := sh.snapshot(ctx)
	if err != nil {
		return err
	}
	say("")
	ok := sh.table(before, after, digest)
	say("")
	if w.IsReal() {
		all, err := sh.showService(ctx, newTag)
		if err != nil {
			return err
		}
		ok = ok && all
		say("")
	}
	for _, d := range done {
		say("  %s: %d pods upgraded in place, template synced: %v", d.Workload, d.Counts.Succeeded, d.TemplateSynced)
	}
	if err := sh.replay(ctx, done); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("a pod did not keep its identity, did not restart exactly once, or does not answer %s", newTag)
	}
	say("\n✔ demo done: every pod moved to %s in place", newTag)
	return nil
}

// describeNodes names the nodes the world will run.
func describeNodes(opts world.Options) (string, error) {
	m := opts.Nodes
	if m == "" {
		var err error
		if m, err = world.ModeFromEnv(); err != nil {
			return "", err
		}
	}
	switch m {
	case world.NodesReal:
		return "2 real nodes (kubelet, containerd, runc, kube-proxy; kube-scheduler, CoreDNS)", nil
	case world.NodesHollow:
		return "3 hollow nodes (the kubelet's code; kube-scheduler)", nil
	}
	return "3 simulated nodes", nil
}
