package world

import (
	"os"
	"testing"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/realnode"
)

// RequireReal skips t, saying why, unless real nodes are asked for
// (INPLACE_NODES=real, not -short) and this machine can run them (the
// binaries of make bin, root, the packages realnode.Check names).
func RequireReal(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real nodes; skipped with -short")
	}
	if os.Getenv(NodesEnv) != string(NodesReal) {
		t.Skipf("runs on real nodes only: set %s=%s", NodesEnv, NodesReal)
	}
	dir, err := cluster.FindBinDir()
	if err != nil {
		t.Skip(err)
	}
	if err := realnode.Check(dir); err != nil {
		t.Skip(err)
	}
}
