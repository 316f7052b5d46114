package hollow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/nodepool"
	"github.com/inplace-dev/inplace/test/proc"
)

// Options configure a pool of hollow nodes.
type Options struct {
	// Nodes is how many nodes to run; default 3.
	Nodes int
	// NamePrefix names the nodes <prefix>-0, <prefix>-1, ...; default "node".
	NamePrefix string
	// BinDir holds hollow-node and kube-scheduler.
	BinDir string
	// Kubeconfig is the admin kubeconfig the nodes and the scheduler use.
	Kubeconfig string
	// Registries are the host:port of the registries the nodes pull from.
	Registries []string
	// Timings: the pull, sandbox, volume attach, start, stop, run and
	// crash times of the fake runtime (back-offs, heartbeats and relists
	// are the kubelet's own); default kubelet.FastTimings.
	Timings *kubelet.Timings
	// Capacity of each node: cpu, memory and pods; defaults as the
	// simulated nodes (32, 128Gi, 110).
	Capacity map[string]resource.Quantity
	// NodeLabels are added to every node's labels.
	NodeLabels map[string]string
	// NoScheduler leaves out kube-scheduler (another one runs).
	NoScheduler bool
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Nodes is a running pool of hollow nodes and its scheduler.
type Nodes struct {
	client    kubernetes.Interface
	opts      Options
	dir       string
	names     []string
	procs     []*proc.Process
	scheduler *proc.Process
	stopOnce  sync.Once
}

// Start runs the scheduler and the nodes and returns once every node is
// Ready and schedulable (the node-lifecycle controller removed its
// not-ready taint). On failure it stops what it started and the error
// carries the processes' log tails.
func Start(ctx context.Context, client kubernetes.Interface, opts Options) (*Nodes, error) {
	opts = opts.withDefaults()
	if opts.BinDir == "" || opts.Kubeconfig == "" {
		return nil, errors.New("start hollow nodes: Options.BinDir and Options.Kubeconfig are required")
	}
	for _, b := range []string{"hollow-node", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			return nil, fmt.Errorf("start hollow nodes: %s not in %s: run `make bin`", b, opts.BinDir)
		}
	}
	dir, err := os.MkdirTemp("", "inplace-hollow-")
	if err != nil {
		return nil, fmt.Errorf("start hollow nodes: %w", err)
	}
	n := &Nodes{client: client, opts: opts, dir: dir}
	if err := n.start(ctx); err != nil {
		logs := proc.Tails(30, append([]*proc.Process{n.scheduler}, n.procs...)...)
		n.Stop()
		return nil, fmt.Errorf("start hollow nodes: %w%s", err, logs)
	}
	return n, nil
}

func (n *Nodes) start(ctx context.Context) error {
	t0 := time.Now()
	if !n.opts.NoScheduler {
		var err error
		if n.scheduler, err = nodepool.StartScheduler(n.dir, n.opts.BinDir, n.opts.Kubeconfig); err != nil {
			return err
		}
	}
	for i := range n.opts.Nodes {
		name := fmt.Sprintf("%s-%d", n.opts.NamePrefix, i)
		p, err := n.startNode(name, i)
		if err != nil {
			return err
		}
		n.names, n.procs = append(n.names, name), append(n.procs, p)
	}
	if err := nodepool.WaitSchedulable(ctx, n.client, n.names, 3*time.Minute, append([]*proc.Process{n.scheduler}, n.procs...)...); err != nil {
		return err
	}
	n.opts.Logger.Info("hollow nodes ready", "nodes", n.names, "took", time.Since(t0), "dir", n.dir)
	return nil
}

func (n *Nodes) startNode(name string, i int) (*proc.Process, error) {
	port, err := nodepool.FreePort()
	if err != nil {
		return nil, err
	}
	t, capacity := n.opts.Timings, n.opts.Capacity
	pods, cpu, mem := capacity["pods"], capacity["cpu"], capacity["memory"]
	args := []string{
		"--name=" + name,
		"--kubeconfig=" + n.opts.Kubeconfig,
		"--root-dir=" + filepath.Join(n.dir, name),
		"--port=" + strconv.Itoa(port),
		fmt.Sprintf("--pod-cidr=10.245.%d.0/24", i),
		"--max-pods=" + strconv.FormatInt(pods.Value(), 10),
		"--cpu=" + cpu.String(),
		"--memory=" + mem.String(),
		"--pull-fixed=" + t.PullFixed.String(),
		"--pull-per-mib=" + t.PullPerMB.String(),
		"--start=" + t.Start.String(),
		"--stop=" + t.Stop.String(),
		"--run=" + t.Run.String(),
		"--crash-after=" + t.CrashAfter.String(),
	}
	// Only when set, so that a hollow-node built before these flags
	// existed still runs the timings that do not use them.
	if t.Sandbox > 0 {
		args = append(args, "--sandbox="+t.Sandbox.String())
	}
	if t.VolumeAttach > 0 {
		args = append(args, "--volume-attach="+t.VolumeAttach.String())
	}
	for _, r := range n.opts.Registries {
		args = append(args, "--registry="+r)
	}
	labels := map[string]string{kubelet.PoolLabel: n.opts.NamePrefix}
	for k, v := range n.opts.NodeLabels {
		labels[k] = v
	}
	for k, v := range labels {
		args = append(args, "--node-labels="+k+"="+v)
	}
	return proc.Start(n.dir, name, filepath.Join(n.opts.BinDir, "hollow-node"), args)
}

// NodeNames lists the pool's nodes.
func (n *Nodes) NodeNames() []string { return append([]string(nil), n.names...) }

// Dir holds the processes' logs and the kubelets' root directories.
func (n *Nodes) Dir() string { return n.dir }

// Kill kills node i's process at once, as a crashed node would.
func (n *Nodes) Kill(i int) { n.procs[i].Kill() }

// Stop ends the nodes and the scheduler and deletes the Node objects, so
// that the node-lifecycle controller does not evict pods of a shared
// cluster from dead nodes. Safe to call twice.
func (n *Nodes) Stop() {
	n.stopOnce.Do(func() {
		var wg sync.WaitGroup
		for _, p := range append([]*proc.Process{n.scheduler}, n.procs...) {
			wg.Add(1)
			go func() { defer wg.Done(); p.Stop(10 * time.Second) }()
		}
		wg.Wait()
		nodepool.DeleteNodes(n.client, n.names, n.opts.Logger)
		if os.Getenv("INPLACE_KEEP_CLUSTER") == "" {
			_ = os.RemoveAll(n.dir)
		}
	})
}

func (o Options) withDefaults() Options {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.NamePrefix == "" {
		o.NamePrefix = "node"
	}
	if o.Timings == nil {
		t := kubelet.FastTimings()
		o.Timings = &t
	}
	c := map[string]resource.Quantity{"cpu": resource.MustParse("32"), "memory": resource.MustParse("128Gi"), "pods": resource.MustParse("110")}
	for k, v := range o.Capacity {
		c[k] = v
	}
	o.Capacity = c
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Pids are the process ids of the scheduler and the nodes by name, for a
// benchmark that reads their CPU time.
func (n *Nodes) Pids() map[string]int {
	out := map[string]int{}
	for _, p := range append([]*proc.Process{n.scheduler}, n.procs...) {
		if p != nil {
			out[p.Name()] = p.Pid()
		}
	}
	return out
}
