package bench

import (
	"flag"
	"os"
	"testing"

	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// TestMain starts the test world only when benchmarks are asked for, so
// `go test ./...` does not pay for a control plane here.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	opts := world.Options{}
	if realistic() {
		t := kubelet.RealisticTimings()
		opts.KubeletOptions.Timings = &t
	}
	world.Main(m, opts)
}

// realistic: INPLACE_BENCH_TIMINGS=realistic models pulls, stops and
// starts that take seconds, and 20 MB images.
func realistic() bool { return os.Getenv("INPLACE_BENCH_TIMINGS") == "realistic" }

// imageOpts sizes the benchmark's images.
func imageOpts() []registry.PushOption {
	if realistic() {
		return []registry.PushOption{registry.WithSizeMB(20)}
	}
	return nil
}
