package world

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/inplace-dev/inplace/test/realnode"
)

var (
	shared     *World
	skipReason string
)

// Main is for TestMain: it starts one world for the whole test binary,
// runs the tests and stops it. With -short it starts nothing and Shared
// skips the tests that need it; so it does, with the reason, when real
// nodes are asked for on a machine that cannot run them.
//
//	func TestMain(m *testing.M) { world.Main(m, world.Options{}) }
func Main(m *testing.M, opts Options) {
	os.Exit(run(m, opts))
}

func run(m *testing.M, opts Options) int {
	flag.Parse()
	if testing.Short() {
		skipReason = "needs the test world; skipped with -short"
		return m.Run()
	}
	w, err := Start(context.Background(), opts)
	var unavailable *realnode.UnavailableError
	if errors.As(err, &unavailable) {
		fmt.Fprintln(os.Stderr, "world:", err)
		skipReason = err.Error()
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Stop()
	t := w.StartTimings()
	fmt.Fprintf(os.Stderr, "world: %s nodes, started in %s (control plane %s, registry %s, nodes %s)\n", w.Mode,
		t.Total.Round(1e6), t.ControlPlane.Round(1e6), t.Registry.Round(1e6), t.Nodes.Round(1e6))
	if w.Real != nil {
		rt := w.Real.StartTimings()
		fmt.Fprintf(os.Stderr, "world: real nodes Ready %s and networking ready %s after they started (host prepared in %s)\n",
			rt.NodesReady.Round(1e6), rt.NetworkReady.Round(1e6), t.Host.Round(1e6))
	}
	shared = w
	return m.Run()
}

// Shared returns the test binary's world started by Main. It skips the
// test under -short and fails it when TestMain did not call Main.
func Shared(t testing.TB) *World {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if shared == nil {
		t.Fatal("world.Shared: no shared world; call world.Main(m, opts) from TestMain")
	}
	// Main read INPLACE_NODES before the tests ran, where go test's cache
	// does not see it: read here, inside a test, it is part of the cached
	// result's key, so `INPLACE_NODES=hollow go test` after a run on
	// simulated nodes runs again instead of printing "(cached)" (CI's
	// hollow e2e pass had been the simulated one's cached result).
	_ = os.Getenv(NodesEnv)
	return shared
}
