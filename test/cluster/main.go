package cluster

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
)

// shared is the control plane of this test binary, set by Main.
var shared *Cluster

// skipReason is why Main did not start a control plane (-short).
var skipReason string

// Main is for TestMain: it starts one control plane for the whole test
// binary, runs the tests and stops it. With -short it starts nothing and
// Shared skips the tests that need it.
//
//	func TestMain(m *testing.M) { cluster.Main(m, cluster.Options{}) }
func Main(m *testing.M, opts Options) {
	os.Exit(run(m, opts))
}

func run(m *testing.M, opts Options) int {
	flag.Parse()
	if testing.Short() {
		skipReason = "needs the control plane; skipped with -short"
		return m.Run()
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Stop()
	fmt.Fprintf(os.Stderr, "cluster: control plane started in %s (%s)\n", c.StartDuration().Round(1e6), c.Dir())
	shared = c
	return m.Run()
}

// Shared returns the test binary's control plane started by Main. It skips
// the test under -short and fails it when TestMain did not call Main.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if shared == nil {
		t.Fatal("cluster.Shared: no shared control plane; call cluster.Main(m, opts) from TestMain")
	}
	return shared
}

// NewNamespace is Shared(t).NewNamespace(t).
func NewNamespace(t testing.TB) string {
	t.Helper()
	return Shared(t).NewNamespace(t)
}
