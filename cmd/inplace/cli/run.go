package cli

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/config"
)

func newRunCmd() *cobra.Command {
	var p config.Process
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the functions of the chain against NATS",
		Long: `run starts the functions named by --functions (all by default) on the
JetStream stream, the webhook receiver, the pod watcher, and an HTTP server
with /healthz, /readyz and /metrics. Without --nats-url it starts an
embedded NATS server (JetStream, loopback only) storing under --nats-data-dir.

The cluster is the one of --kubeconfig, which defaults to $KUBECONFIG (as
kubectl's); with neither, inplace runs in-cluster (its ServiceAccount).
Defaults for every workload come from the config-inplace ConfigMap in
--config-namespace.

With --fleet-hub the process is a fleet's hub (docs/fleet.md): on the hub's
NATS (--nats-url, or embedded) it runs the receiver and the promotion
controller of --fleet-policy, which takes each push the receiver publishes
and releases it to the member clusters stage by stage, from the members'
reported rollouts; it runs none of the chain (the members, each
--fleet-member NAME, do) and needs no cluster. Every flag may also come from its INPLACE_* variable,
named beside it below.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := p.Validate(); err != nil {
				return err
			}
			stop, err := cpuProfile(os.Getenv("INPLACE_CPUPROFILE"))
			if err != nil {
				return err
			}
			defer stop()
			rr, err := app.Start(cmd.Context(), &p, newLogger(p.LogLevel))
			if err != nil {
				return err
			}
			return rr.Wait()
		},
	}
	if err := config.BindFlags(cmd.Flags(), &p); err != nil {
		// A malformed INPLACE_* variable: fail when the command runs.
		cmd.RunE = func(*cobra.Command, []string) error { return err }
	}
	return cmd
}

// cpuProfile writes a CPU profile of the whole process to file until stop
// is called (for benchmarks; nothing when file is empty).
func cpuProfile(file string) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("INPLACE_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("INPLACE_CPUPROFILE %s: %w", file, err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
