package cli

import (
	"github.com/spf13/cobra"

	function "github.com/inplace-dev/inplace"
)

// newFunctionCmd serves the functions behind HTTP, the way the Knative
// Services of config/knative run the image.
func newFunctionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "function",
		Short: "Serve INPLACE_FUNCTIONS behind HTTP as a Knative function (CloudEvents in, replies and K_SINK out)",
		Long: `function runs the module's knative.dev/func-go instanced function: each
CloudEvent posted to it is dispatched by type to compute-spec, pre-pull,
patch-pod or verify (only those named by INPLACE_FUNCTIONS, so one image
serves four Knative Services). A permanent error answers 422, a retryable
one 503 (with Retry-After for "not yet"); a handler's first output is the
reply, the others go to K_SINK. With INPLACE_FUNCTIONS=receiver it serves the
webhook receiver, publishing to K_SINK. Settings come from INPLACE_* variables
(the same as the flags of 'inplace run': INPLACE_NATS_URL, INPLACE_KUBECONFIG
or in-cluster, ...).

It listens on LISTEN_ADDRESS, by default [::]:8080 (every interface, port
8080: what Knative Serving expects); PORT=N is taken as :N, as func-go does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return function.Serve(cmd.Context()) },
	}
}
