package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with
// -ldflags "-X github.com/inplace-dev/inplace/cmd/inplace/cli.version=v0.1.0".
var version = "dev"

// NewRoot is the inplace command with every subcommand.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "inplace",
		Short: "Event-driven, in-place upgrades of Kubernetes pods",
		Long: `inplace moves running pods that opted in onto a newly pushed image in place:
the container restarts, the pod keeps its name, UID, IP, node and volumes.
A registry webhook starts it; compute-spec, pre-pull, patch-pod and verify
run as functions chained through a NATS JetStream stream of CloudEvents.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(), newVersionCmd(), newPlanCmd(), newFunctionCmd(), newNATSCmd(), newRBACCmd())
	root.AddCommand(toolCommands()...)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return err
		},
	}
}

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		v += " " + bi.GoVersion
	}
	return "inplace " + v
}
