// Command inplace is the one binary of the project: `inplace run` runs the
// functions of the chain against NATS (embedded by default), and the other
// subcommands are the operator's tools.
package main

import (
	"fmt"
	"os"

	"knative.dev/pkg/signals"

	"github.com/inplace-dev/inplace/cmd/inplace/cli"
)

func main() {
	ctx := signals.NewContext()
	if err := cli.NewRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "inplace:", err)
		os.Exit(1)
	}
}
