package bench

import (
	"flag"
	"os"
	"testing"

	"github.com/inplace-dev/inplace/test/world"
)

// TestMain starts the test world only when benchmarks are asked for, so
// `go test ./...` does not pay for a control plane here.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	world.Main(m, world.Options{})
}
