package install_test

import (
	"os"
	"testing"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/realnode"
	"github.com/inplace-dev/inplace/test/world"
)

// requireReal skips, saying why, unless real nodes are asked for
// (INPLACE_NODES=real) and this machine can run them.
func requireReal(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("installs inplace on real nodes; skipped with -short")
	}
	if os.Getenv(world.NodesEnv) != string(world.NodesReal) {
		t.Skipf("installs inplace on real nodes only: set %s=%s", world.NodesEnv, world.NodesReal)
	}
	dir, err := cluster.FindBinDir()
	if err != nil {
		t.Skip(err)
	}
	if err := realnode.Check(dir); err != nil {
		t.Skip(err)
	}
}
