package fidelity_test

import (
	"context"
	"os"
	"regexp"

	"github.com/inplace-dev/inplace/test/cluster"
	testimages "github.com/inplace-dev/inplace/test/images"
	"github.com/inplace-dev/inplace/test/realnode"
	w "github.com/inplace-dev/inplace/test/world"
)

// prepareReal prepares the machine for a real node when INPLACE_NODES=real
// asks for one and the machine can run it (else noReal says why), and
// returns the control plane's options: its API server then listens on the
// host bridge, where the real node reaches it.
func (p *pools) prepareReal(ctx context.Context) (cluster.Options, error) {
	if os.Getenv(w.NodesEnv) != string(w.NodesReal) {
		p.noReal = "compares with a real node only with " + w.NodesEnv + "=" + string(w.NodesReal)
		return cluster.Options{}, nil
	}
	bin, err := cluster.FindBinDir()
	if err == nil {
		err = realnode.Check(bin)
	}
	if err != nil {
		p.noReal = err.Error()
		return cluster.Options{}, nil
	}
	if p.host, err = realnode.Prepare(ctx, nil); err != nil {
		return cluster.Options{}, err
	}
	return cluster.Options{BindAddress: p.host.IP()}, nil
}

// startReal starts one real node, real-0, when the machine was prepared
// for it; pods name their node, so it runs no scheduler.
func (p *pools) startReal(ctx context.Context, bin string) error {
	if p.host == nil {
		return nil
	}
	pause, err := testimages.Pause(ctx)
	if err != nil {
		return err
	}
	if _, err := p.registry.PushImage(ctx, w.SandboxRepo, w.SandboxTag, pause); err != nil {
		return err
	}
	p.real, err = p.host.Start(ctx, realnode.Options{Nodes: 1, NamePrefix: "real", BinDir: bin, Cluster: p.cluster,
		Registries: []string{p.registry.Host()}, SandboxImage: p.registry.Host() + "/" + w.SandboxRepo + ":" + w.SandboxTag,
		NoScheduler: true})
	return err
}

// known are the scenarios whose stories differ on a node kind for a known
// reason, by node and scenario: the test logs their differences instead
// of failing.
var known = map[string]map[string]string{
	realNode: {
		"reference switch": "containerd 1.6 reports a tag@digest reference's status image as the image's config ID (sha256:...), " +
			"the simulated node the reference itself, so the container never shows image v1pinned",
	},
}

// eventDifferences are what a real node's Events say otherwise than the
// simulated node's, each with its reason; realEvents takes them out of
// both stories before they are compared.
var eventDifferences = []struct {
	re        *regexp.Regexp
	with, why string
}{
	{regexp.MustCompile(`Image size: [0-9]+ bytes`), "Image size: <n> bytes",
		"containerd's image size counts every blob of the image as it stores it; the simulated node's is the registry's sum, tens to hundreds of bytes apart"},
	{regexp.MustCompile(`rpc error: code = [A-Za-z]+ desc = `), "",
		"a pull error reaches the kubelet through CRI with its gRPC status; the simulated node's and the hollow node's runtimes return the error alone"},
}

func realEvents(evs []string) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		for _, d := range eventDifferences {
			e = d.re.ReplaceAllString(e, d.with)
		}
		out[i] = e
	}
	return out
}
