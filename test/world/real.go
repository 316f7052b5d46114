package world

import (
	"context"
	"errors"

	"github.com/inplace-dev/inplace/test/images"
	"github.com/inplace-dev/inplace/test/realnode"
)

// SandboxRepo and SandboxTag name the pause image the world pushes to its
// registry for the real nodes' containerd (sandbox_image).
const (
	SandboxRepo = "inplace/pause"
	SandboxTag  = "3.10"
)

// prepareReal checks the machine for real nodes and prepares it (a slot,
// the host bridge) before the control plane starts, whose API server then
// listens on the bridge so that nodes and pods reach it.
func (w *World) prepareReal(ctx context.Context, opts *Options) error {
	if opts.Cluster != nil {
		return errors.New("real nodes need the control plane the world starts (its API server listens on the host bridge): leave Options.Cluster unset")
	}
	dir, err := binDir(*opts)
	if err != nil {
		return err
	}
	if err := realnode.Check(dir); err != nil {
		return err
	}
	h, err := realnode.Prepare(ctx, opts.Logger)
	if err != nil {
		return err
	}
	w.RealHost = h
	opts.ClusterOptions.BindAddress = h.IP()
	return nil
}

// startReal pushes the pause image and runs the real nodes.
func (w *World) startReal(ctx context.Context, opts Options) error {
	dir, err := binDir(opts)
	if err != nil {
		return err
	}
	pause, err := images.Pause(ctx)
	if err != nil {
		return err
	}
	if _, err := w.Registry.PushImage(ctx, SandboxRepo, SandboxTag, pause); err != nil {
		return err
	}
	ko := opts.KubeletOptions
	n, err := w.RealHost.Start(ctx, realnode.Options{
		Nodes: ko.Nodes, NamePrefix: ko.NamePrefix, BinDir: dir, Cluster: w.Cluster,
		Registries:   []string{w.Registry.Host()},
		SandboxImage: w.Registry.Host() + "/" + SandboxRepo + ":" + SandboxTag,
		NodeLabels:   ko.NodeLabels, Logger: opts.Logger, KubeletVerbosity: opts.KubeletVerbosity,
	})
	if err != nil {
		return err
	}
	w.Real = n
	return nil
}
