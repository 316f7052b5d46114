package fidelity_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/hollow"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/realnode"
	"github.com/inplace-dev/inplace/test/registry"
)

// pools is the control plane with one simulated and one hollow node and,
// with INPLACE_NODES=real on a machine that can run it, one real node.
type pools struct {
	cluster  *cluster.Cluster
	registry *registry.Registry
	sim      *kubelet.Kubelet
	hollow   *hollow.Nodes
	host     *realnode.Host
	real     *realnode.Nodes
	// noReal says why there is no real node.
	noReal string
}

var shared *pools

const (
	simNode    = "sim-0"
	hollowNode = "hollow-0"
	realNode   = "real-0"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	p, err := start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared = p
	code := m.Run()
	p.stop()
	os.Exit(code)
}

func start(ctx context.Context) (*pools, error) {
	p := &pools{}
	co, err := p.prepareReal(ctx)
	if err != nil {
		p.stop()
		return nil, err
	}
	if p.cluster, err = cluster.Start(ctx, co); err != nil {
		p.stop()
		return nil, err
	}
	if p.registry, err = registry.Start(ctx, registry.Options{Runnable: p.host != nil}); err != nil {
		p.stop()
		return nil, err
	}
	rc := p.cluster.RestConfig()
	rc.QPS, rc.Burst = 200, 400
	t := timings()
	if p.sim, err = kubelet.New(kubernetes.NewForConfigOrDie(rc), kubelet.Options{Nodes: 1, NamePrefix: "sim",
		Resolver: p.registry, DisableScheduler: true, Timings: &t}); err != nil {
		p.stop()
		return nil, err
	}
	if err = p.sim.Start(ctx); err != nil {
		p.stop()
		return nil, err
	}
	bin, err := cluster.FindBinDir()
	if err != nil {
		p.stop()
		return nil, err
	}
	if p.hollow, err = hollow.Start(ctx, p.cluster.Client(), hollow.Options{Nodes: 1, NamePrefix: "hollow", BinDir: bin,
		Kubeconfig: p.cluster.Kubeconfig(), Registries: []string{p.registry.Host()}, Timings: &t, NoScheduler: true}); err != nil {
		p.stop()
		return nil, err
	}
	if err := p.startReal(ctx, bin); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// timings are the nodes' times: the runtime's (shared by both kinds of
// node) fast, except that containers that exit run long enough that a 1s
// relist sees them running first; the simulated kubelet's own periods are
// the real kubelet's (1s relist, 10s requeue and back-off), so that both
// kinds of node go through the same states.
func timings() kubelet.Timings {
	t := kubelet.FastTimings()
	t.Run, t.CrashAfter = 3*time.Second, 3*time.Second
	r := kubelet.RealisticTimings()
	t.RelistPeriod, t.ErrorRequeue, t.BackoffInitial, t.BackoffMax = r.RelistPeriod, r.ErrorRequeue, r.BackoffInitial, r.BackoffMax
	return t
}

func (p *pools) stop() {
	if p.real != nil {
		p.real.Stop()
	}
	if p.hollow != nil {
		p.hollow.Stop()
	}
	if p.sim != nil {
		p.sim.Stop()
	}
	if p.registry != nil {
		_ = p.registry.Close()
	}
	if p.cluster != nil {
		p.cluster.Stop()
	}
	if p.host != nil {
		_ = p.host.Close()
	}
}

func world(t *testing.T) *pools {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the control plane and both kinds of node; skipped with -short")
	}
	return shared
}
