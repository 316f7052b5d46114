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
)

// NodesEnv chooses the node mode of every world whose Options leave it
// unset: INPLACE_NODES=hollow runs every test, benchmark and the demo on
// hollow nodes.
const NodesEnv = "INPLACE_NODES"

// ModeFromEnv is the node mode INPLACE_NODES asks for; simulated when unset.
func ModeFromEnv() (NodeMode, error) {
	switch m := NodeMode(os.Getenv(NodesEnv)); m {
	case "", NodesSimulated:
		return NodesSimulated, nil
	case NodesHollow:
		return NodesHollow, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", NodesEnv, m, NodesSimulated, NodesHollow)
	}
}

func (w *World) startNodes(ctx context.Context, opts Options) error {
	w.Mode = opts.Nodes
	if w.Mode == "" {
		m, err := ModeFromEnv()
		if err != nil {
			return err
		}
		w.Mode = m
	}
	ko := opts.KubeletOptions
	if w.Mode == NodesHollow {
		binDir := opts.ClusterOptions.BinDir
		if binDir == "" {
			var err error
			if binDir, err = cluster.FindBinDir(); err != nil {
				return err
			}
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
	if w.Hollow != nil {
		return w.Hollow.NodeNames()
	}
	return w.Kubelet.NodeNames()
}

// IsHollow reports whether the world's nodes run the real kubelet's code.
func (w *World) IsHollow() bool { return w.Mode == NodesHollow }
