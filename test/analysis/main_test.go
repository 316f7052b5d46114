package analysis

import (
	"fmt"
	"os"
	"testing"

	"knative.dev/pkg/signals"

	"github.com/inplace-dev/inplace/cmd/inplace/cli"
)

// childEnv makes the test binary run as `inplace` (the same code as the
// binary): the separate process a test kills.
const childEnv = "INPLACE_ANALYSIS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func child(args []string) int {
	root := cli.NewRoot()
	root.SetArgs(args)
	if err := root.ExecuteContext(signals.NewContext()); err != nil {
		fmt.Fprintln(os.Stderr, "inplace:", err)
		return 1
	}
	return 0
}
