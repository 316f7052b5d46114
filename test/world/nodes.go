package world

import (
	"context"
	"fmt"
	"os"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/hollow"
	"github.com/inplace-dev/inplace/test/kubelet"
)

// NodeMode says what runs the world's nodes.
type NodeMode string

const (
	// NodesSimulated: the simulated kubelet and scheduler of test/kubelet
	// (fast, in process; the default).
	NodesSimulated NodeMode = "simulated"
	// NodesHollow: the real kubelet's code as hollow-node processes and the
	// real kube-scheduler (test/hollow).
	NodesHollow NodeMode = "hollow"
	// NodesReal: real nodes, each a network namespace with its own
	// containerd, the real kubelet and kube-proxy, the real kube-scheduler
	// and CoreDNS (test/realnode). Needs root and the packages
	// test/tools/packages.sh installs.
	NodesReal NodeMode = "real"
)

// NodesEnv chooses the node mode of every world whose Options leave it
// unset: INPLACE_NODES=hollow runs every test, benchmark and the demo on
// hollow nodes, INPLACE_NODES=real on real ones.
const NodesEnv = "INPLACE_NODES"

// ModeFromEnv is the node mode INPLACE_NODES asks for; simulated when unset.
func ModeFromEnv() (NodeMode, error) {
	switch m := NodeMode(os.Getenv(NodesEnv)); m {
	case "", NodesSimulated:
		return NodesSimulated, nil
	case NodesHollow, NodesReal:
		return m, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q, %q or %q", NodesEnv, m, NodesSimulated, NodesHollow, NodesReal)
	}
}

// mode is the node mode opts ask for, else INPLACE_NODES's.
func mode(opts Options) (NodeMode, error) {
	if opts.Nodes != "" {
		return opts.Nodes, nil
	}
	return ModeFromEnv()
}

// binDir is where the node binaries are: the cluster options', else
// cluster.FindBinDir's.
func binDir(opts Options) (string, error) {
	if opts.ClusterOptions.BinDir != "" {
		return opts.ClusterOptions.BinDir, nil
	}
	return cluster.FindBinDir()
}

func (w *World) startNodes(ctx context.Context, opts Options) error {
	ko := opts.KubeletOptions
	switch w.Mode {
	case NodesReal:
		return w.startReal(ctx, opts)
	case NodesHollow:
		binDir, err := binDir(opts)
		if err != nil {
			return err
		}
		h, err := hollow.Start(ctx, w.Client(), hollow.Options{
			Nodes: ko.Nodes, NamePrefix: ko.NamePrefix, BinDir: binDir, Kubeconfig: w.Cluster.Kubeconfig(),
			Registries: []string{w.Registry.Host()}, Timings: ko.Timings, Capacity: ko.Capacity,
			NodeLabels: ko.NodeLabels, Logger: opts.Logger,
		})
		if err != nil {
			return err
		}
		w.Hollow = h
		return nil
	}
	if ko.Resolver == nil {
		ko.Resolver = w.Registry
	}
	if ko.Logger == nil {
		ko.Logger = opts.Logger
	}
	k, err := kubelet.New(w.kubeletClient(), ko)
	if err != nil {
		return err
	}
	if err := k.Start(ctx); err != nil {
		return err
	}
	w.Kubelet = k
	return nil
}

// NodeNames lists the world's nodes, whatever runs them.
func (w *World) NodeNames() []string {
	switch {
	case w.Hollow != nil:
		return w.Hollow.NodeNames()
	case w.Real != nil:
		return w.Real.NodeNames()
	}
	return w.Kubelet.NodeNames()
}

// NodeLogs are the paths of the real nodes' kube-proxy and kubelet logs
// (none on other nodes), for a test explaining a failure.
func (w *World) NodeLogs() []string {
	if w.Real == nil {
		return nil
	}
	var out []string
	for _, n := range w.Real.NodeNames() {
		out = append(out, w.Real.ProxyLog(n), w.Real.KubeletLog(n))
	}
	return out
}

// IsHollow reports whether the world's nodes run the real kubelet's code.
func (w *World) IsHollow() bool { return w.Mode == NodesHollow }

// IsReal reports whether the world's nodes are real nodes.
func (w *World) IsReal() bool { return w.Mode == NodesReal }
