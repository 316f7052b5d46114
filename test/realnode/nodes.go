package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/nodepool"
	"github.com/inplace-dev/inplace/test/proc"
)

// Options configure a pool of real nodes.
type Options struct {
	// Nodes is how many nodes to run; default 2.
	Nodes int
	// NamePrefix names the nodes <prefix>-0, <prefix>-1, ...; default "node".
	NamePrefix string
	// BinDir holds kubelet, kube-proxy, coredns and kube-scheduler.
	BinDir string
	// Cluster is the control plane the nodes join; its API server must
	// listen on Host.IP (cluster.Options.BindAddress).
	Cluster *cluster.Cluster
	// Registries are the 127.0.0.1:<port> plain-HTTP registries the nodes
	// pull from (forwarded to the host bridge).
	Registries []string
	// SandboxImage is containerd's sandbox (pause) image, in one of
	// Registries.
	SandboxImage string
	// NodeLabels are added to every node's labels.
	NodeLabels map[string]string
	// NoScheduler leaves out kube-scheduler (another one runs).
	NoScheduler bool
	// KubeletVerbosity is the kubelets' log level (--v); 0 leaves the
	// kubelet's default. It changes what the kubelet logs, nothing it does.
	KubeletVerbosity int
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Nodes is a running pool of real nodes with its scheduler and CoreDNS.
type Nodes struct {
	host       *Host
	client     kubernetes.Interface
	opts       Options
	nodes      []*node
	forwards   map[string]*forward // by registry host:port
	resolvConf string
	scheduler  *proc.Process
	dns        *proc.Process
	dnsReady   string
	timings    Timings
	stopOnce   sync.Once
}

// Timings are how long Start took to have the nodes Ready and schedulable,
// and the networking ready (CoreDNS synced, every kube-proxy synced), both
// from its start.
type Timings struct {
	NodesReady, NetworkReady time.Duration
}

// Start runs the pool's nodes on the prepared host and returns once every
// node is Ready and schedulable and the networking is ready. On failure it
// stops what it started (Close removes the rest) and the error carries
// the processes' log tails.
func (h *Host) Start(ctx context.Context, opts Options) (*Nodes, error) {
	opts = opts.withDefaults()
	if err := h.validate(opts); err != nil {
		return nil, fmt.Errorf("start real nodes: %w", err)
	}
	n := &Nodes{host: h, client: opts.Cluster.Client(), opts: opts, forwards: map[string]*forward{}}
	if err := n.start(ctx); err != nil {
		logs := proc.Tails(30, n.procs()...)
		n.Stop()
		return nil, fmt.Errorf("start real nodes: %w%s", err, logs)
	}
	return n, nil
}

func (h *Host) validate(o Options) error {
	switch {
	case o.Cluster == nil:
		return errors.New("Options.Cluster is required")
	case o.BinDir == "":
		return errors.New("Options.BinDir is required")
	case o.SandboxImage == "":
		return errors.New("Options.SandboxImage is required")
	case o.Nodes < 1 || o.Nodes > MaxNodes:
		return fmt.Errorf("Options.Nodes = %d: want 1 to %d", o.Nodes, MaxNodes)
	}
	u, err := url.Parse(o.Cluster.Server())
	if err != nil || u.Hostname() != h.IP() {
		return fmt.Errorf("the API server %s does not listen on the host bridge address %s: start the cluster with cluster.Options.BindAddress = Host.IP()",
			o.Cluster.Server(), h.IP())
	}
	return Check(o.BinDir)
}

func (n *Nodes) start(ctx context.Context) error {
	t0 := time.Now()
	if err := n.startHostSide(ctx); err != nil {
		return err
	}
	for i := range n.opts.Nodes {
		if err := n.startNode(ctx, i); err != nil {
			return err
		}
	}
	if err := nodepool.WaitSchedulable(ctx, n.client, n.NodeNames(), 3*time.Minute, n.procs()...); err != nil {
		return err
	}
	n.timings.NodesReady = time.Since(t0)
	if err := n.setPodCIDRs(ctx); err != nil {
		return err
	}
	if err := n.waitNetwork(ctx); err != nil {
		return err
	}
	n.timings.NetworkReady = time.Since(t0)
	n.opts.Logger.Info("real nodes ready", "nodes", n.NodeNames(), "ready", n.timings.NodesReady,
		"network", n.timings.NetworkReady, "dir", n.host.Dir())
	return nil
}

// startHostSide runs what the pool has on the host: the registries'
// forwards, the scheduler and CoreDNS.
func (n *Nodes) startHostSide(ctx context.Context) error {
	for _, r := range n.opts.Registries {
		f, err := startForward(ctx, n.host.IP(), r)
		if err != nil {
			return err
		}
		n.forwards[r] = f
	}
	n.resolvConf = filepath.Join(n.host.Dir(), "resolv.conf")
	if err := writeFiles(map[string][]byte{n.resolvConf: []byte("nameserver " + n.host.IP() + "\n")}); err != nil {
		return err
	}
	if !n.opts.NoScheduler {
		var err error
		if n.scheduler, err = nodepool.StartScheduler(n.host.Dir(), n.opts.BinDir, n.opts.Cluster.Kubeconfig()); err != nil {
			return err
		}
	}
	return n.startDNS(ctx)
}

func (n *Nodes) startNode(ctx context.Context, i int) error {
	l := layout(n.host.Slot())
	nd := &node{
		index: i, name: fmt.Sprintf("%s-%d", n.opts.NamePrefix, i), ip: l.nodeIP(i), podCIDR: l.podCIDR(i),
		cniNetwork: l.cniNetwork(i), cgroupRoot: l.cgroupRoot(i),
	}
	nd.dir = filepath.Join(n.host.Dir(), nd.name)
	if err := n.host.update(func(s *state) { s.Nodes = append(s.Nodes, nodeState{Index: i, Name: nd.name}) }); err != nil {
		return err
	}
	n.nodes = append(n.nodes, nd)
	if err := os.MkdirAll(nd.dir, 0o755); err != nil {
		return fmt.Errorf("node %s: %w", nd.name, err)
	}
	if err := n.createNetwork(ctx, nd); err != nil {
		return err
	}
	if err := createCgroups(nd); err != nil {
		return err
	}
	if err := n.startContainerd(ctx, nd); err != nil {
		return fmt.Errorf("node %s: %w", nd.name, err)
	}
	if err := n.startKubelet(nd); err != nil {
		return fmt.Errorf("node %s: %w", nd.name, err)
	}
	return n.startProxy(nd)
}

// setPodCIDRs records each node's pod /24 in its spec, as a cluster that
// allocates node CIDRs has it.
func (n *Nodes) setPodCIDRs(ctx context.Context) error {
	for _, nd := range n.nodes {
		patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, nd.podCIDR, nd.podCIDR)
		if _, err := n.client.CoreV1().Nodes().Patch(ctx, nd.name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("node %s pod CIDR: %w", nd.name, err)
		}
	}
	return nil
}

// procs are the pool's processes, nil ones included.
func (n *Nodes) procs() []*proc.Process {
	out := []*proc.Process{n.scheduler, n.dns}
	for _, nd := range n.nodes {
		out = append(out, nd.procs()...)
	}
	return out
}

func (n *Nodes) exited() error {
	for _, p := range n.procs() {
		if p == nil {
			continue
		}
		if err := p.ErrExited(); err != nil {
			return err
		}
	}
	return nil
}

// Stop ends the pool's processes (kube-proxy, kubelets, containerd,
// CoreDNS, the scheduler: the containers and shims are left to
// Host.Close), the forwards, and deletes the Node objects and kube-dns.
// Safe to call twice.
func (n *Nodes) Stop() {
	n.stopOnce.Do(func() {
		var wg sync.WaitGroup
		for _, p := range n.procs() {
			wg.Add(1)
			go func() { defer wg.Done(); p.Stop(10 * time.Second) }()
		}
		wg.Wait()
		for _, f := range n.forwards {
			f.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		n.deleteDNS(ctx)
		nodepool.DeleteNodes(n.client, n.NodeNames(), n.opts.Logger)
	})
}

// NodeNames lists the pool's nodes.
func (n *Nodes) NodeNames() []string {
	out := make([]string, len(n.nodes))
	for i, nd := range n.nodes {
		out[i] = nd.name
	}
	return out
}

// KubeletLog is the path of the log of the named node's kubelet ("" for
// no such node).
func (n *Nodes) KubeletLog(name string) string {
	nd := n.node(name)
	if nd == nil || nd.kubelet == nil {
		return ""
	}
	return nd.kubelet.LogPath()
}

// ProxyLog is the path of the log of the named node's kube-proxy ("" for
// no such node). kube-proxy runs at --v=2: each sync of its rules, with
// when it began and how long it took.
func (n *Nodes) ProxyLog(name string) string {
	nd := n.node(name)
	if nd == nil || nd.proxy == nil {
		return ""
	}
	return nd.proxy.LogPath()
}

// NodeIP is the named node's address, "" if it is not in the pool.
func (n *Nodes) NodeIP(name string) string {
	if nd := n.node(name); nd != nil {
		return nd.ip
	}
	return ""
}

// CgroupRoot is the named node's cgroup root (under which the kubelet
// makes kubepods), relative to each hierarchy's mount; "" if it is not in
// the pool.
func (n *Nodes) CgroupRoot(name string) string {
	if nd := n.node(name); nd != nil {
		return nd.cgroupRoot
	}
	return ""
}

func (n *Nodes) node(name string) *node {
	for _, nd := range n.nodes {
		if nd.name == name {
			return nd
		}
	}
	return nil
}

// StartTimings says how long Start took to have the nodes and the
// networking ready.
func (n *Nodes) StartTimings() Timings { return n.timings }

// Pids are the process ids of the pool's processes by name (node ones as
// <node>/<process>), for a benchmark or a test reading their memory.
func (n *Nodes) Pids() map[string]int {
	out := map[string]int{}
	for _, p := range []*proc.Process{n.scheduler, n.dns} {
		if p != nil {
			out[p.Name()] = p.Pid()
		}
	}
	for _, nd := range n.nodes {
		for _, p := range nd.procs() {
			if p != nil {
				out[nd.name+"/"+p.Name()] = p.Pid()
			}
		}
	}
	return out
}

func (o Options) withDefaults() Options {
	if o.Nodes == 0 {
		o.Nodes = 2
	}
	if o.NamePrefix == "" {
		o.NamePrefix = "node"
	}
	labels := map[string]string{kubelet.PoolLabel: o.NamePrefix}
	for k, v := range o.NodeLabels {
		labels[k] = v
	}
	o.NodeLabels = labels
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}
