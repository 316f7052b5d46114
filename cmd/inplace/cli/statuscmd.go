package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type statusOptions struct {
	conn   natsFlags
	kube   kubeFlags
	bucket string
	all    bool
	recent time.Duration
	output string
	// fleet shows one push through the fleet from the hub's bucket.
	fleet       bool
	fleetBucket string
}

func newStatusCmd() *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status [KIND/NAME | --fleet [PUSH]]",
		Short: "Show the rollouts in flight and the recent ones, with progress",
		Long: `status reads the rollout of each workload from the KV bucket and shows
one line each: phase (Running, Halted, Syncing, Completed), a progress bar
of the pods that run the target (upgraded, or needing nothing), how many
pods succeeded, are in flight, failed or were rolled back, the age, the
upgrade id (for ` + "`inplace trace`" + `), the target and why a rollout halted.

Rollouts not completed are always shown; completed ones only when they
finished within --recent, or all with --all; -n shows those of one
namespace.

With KIND/NAME (deploy/web, sts/db, po/web-0, ...) status shows that
workload's rollout and each of its pods: node, readiness, the image and
restart count of each container, and where the pod's own upgrade stands
(its inplace.dev/state).

With --fleet (connected to the hub's NATS) status shows one push through
the fleet, the newest or the PUSH named: its stages in order with their
state (Pending, AwaitingApproval, Running, AwaitingAnalysis, Done, Halted,
Stopped) and, for each cluster of each stage, each workload's rollout there
(NotSent, InFlight, Succeeded, Failed, Halted) with the upgrade id the
member derives for it (for ` + "`inplace trace`" + ` against that member).`,
		Example: `  inplace status
  inplace status --all -o json
  inplace status deploy/web -n shop
  inplace status --fleet --nats-url nats://hub:4222
  inplace status --fleet 3f2a9c... -o json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeWorkload,
	}
	o.conn.bindURL(cmd.Flags())
	o.kube.bind(cmd.Flags(), "namespace of KIND/NAME (default: the kubeconfig context's); without KIND/NAME only the rollouts of this namespace")
	cmd.Flags().StringVar(&o.bucket, "kv-bucket", bus.DefaultConfig().KVBucket, "KV bucket holding the rollouts")
	cmd.Flags().BoolVar(&o.fleet, "fleet", false, "show one push through the fleet (the newest, or the PUSH id given) from the hub's fleet bucket")
	cmd.Flags().StringVar(&o.fleetBucket, "fleet-bucket", defaultFleetBucket, "the hub's KV bucket holding the fleet records (with --fleet)")
	cmd.Flags().BoolVar(&o.all, "all", false, "include every completed rollout")
	cmd.Flags().DurationVar(&o.recent, "recent", time.Hour, "show rollouts completed within this long")
	checkOutput := outputFlag(cmd.Flags(), &o.output, "table", "json", "yaml")
	completeOutput(cmd, "table", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(); err != nil {
			return err
		}
		if o.fleet {
			push := ""
			if len(args) == 1 {
				push = args[0]
			}
			return runFleetStatus(cmd, &o, push)
		}
		if len(args) == 1 {
			return runWorkloadStatus(cmd, &o, args[0])
		}
		return runStatus(cmd, &o)
	}
	return cmd
}

func runStatus(cmd *cobra.Command, o *statusOptions) error {
	c, err := o.conn.connect()
	if err != nil {
		return err
	}
	defer c.nc.Close()
	rs, err := history.ReadRollouts(cmd.Context(), c.js, o.bucket)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	ns := o.kube.explicitNamespace()
	sums := make([]history.Summary, 0, len(rs))
	for _, r := range rs {
		if ns == "" || r.Workload.Namespace == ns {
			sums = append(sums, history.Summarize(r))
		}
	}
	now := time.Now()
	rows := history.SelectStatus(sums, o.all, o.recent, now)
	out := cmd.OutOrStdout()
	if o.output != "table" {
		if rows == nil {
			rows = []history.Summary{}
		}
		_, err := writeStructured(out, o.output, rows)
		return err
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintf(out, "no rollout in flight or completed within %s (--all shows every rollout)\n", o.recent)
		return err
	}
	return history.WriteStatus(out, rows, now)
}
