// Command inplace is the one binary of the project: `inplace run` runs the
// functions of the chain against NATS (embedded by default), and the other
// subcommands are the operator's tools.
package main

import (
	"fmt"
	"os"

	"knative.dev/pkg/signals"
)

func main() {
	ctx := signals.NewContext()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "inplace:", err)
		os.Exit(1)
	}
}
