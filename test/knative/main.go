package knative

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/inplace-dev/inplace/test/world"
)

var (
	shared     *Node
	skipReason string
)

// Main is for TestMain: it starts one world and one Knative node on it for
// the whole test binary, runs the tests and stops both. With -short it
// starts nothing and Shared skips.
//
// The world has simulated nodes unless opts says otherwise (INPLACE_NODES
// is not followed): on hollow nodes the real kubelet probes the pods of
// the ApiServerSource adapter's Deployment, whose process runs on the host
// where the probes cannot reach it, so the source never becomes Ready.
func Main(m *testing.M, opts world.Options) {
	if opts.Nodes == "" {
		opts.Nodes = world.NodesSimulated
	}
	os.Exit(run(m, opts))
}

func run(m *testing.M, opts world.Options) int {
	flag.Parse()
	if testing.Short() {
		skipReason = "needs the test world and the Knative node; skipped with -short"
		return m.Run()
	}
	ctx := context.Background()
	w, err := world.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Stop()
	n, err := Start(ctx, w, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer n.Stop()
	shared = n
	return m.Run()
}

// Shared returns the test binary's node started by Main, skipping the
// test under -short.
func Shared(t testing.TB) *Node {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if shared == nil {
		t.Fatal("knative.Shared: no node; call knative.Main(m, opts) from TestMain")
	}
	return shared
}
