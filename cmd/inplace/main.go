// Command inplace is the one binary of the project: `inplace run` runs the
// functions of the chain against NATS (embedded by default), and the other
// subcommands are the operator's tools.
package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"knative.dev/pkg/signals"

	"github.com/inplace-dev/inplace/cmd/inplace/cli"
)

func main() {
	// The operator's commands report an unreachable API server in their
	// error; client-go's own log lines (klog) would say it again, twice.
	// The long-running ones keep them.
	if len(os.Args) > 1 && !slices.Contains([]string{"run", "function"}, os.Args[1]) {
		klog.SetLogger(logr.Discard())
	}
	ctx := signals.NewContext()
	if err := cli.NewRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "inplace:", err)
		os.Exit(1)
	}
}
