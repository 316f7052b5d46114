package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type traceOptions struct {
	conn natsFlags
	// fleet traces one push through the fleet from the hub.
	fleet       bool
	fleetBucket string
	since       string
	limit       int
	output      string
}

func newTraceCmd() *cobra.Command {
	var o traceOptions
	cmd := &cobra.Command{
		Use:   "trace [UPGRADE-ID | --fleet [PUSH]]",
		Short: "Show the whole chain of one rollout, per pod, with timings",
		Long: `trace reads every event of one upgrade from the stream (those with its
upgrade id, its dead letters, and the image.pushed that started it, found
by the W3C trace id its first plans continue) and shows them grouped per
pod in time order: planned, prepulled, patched, what the kubelet reported,
and the outcome with its reason and message, each with the time since the
step before; then how the rollout ended.

Without an argument, trace lists the recent upgrades (newest first, from
--since, by default the last 24 hours): their ids, workloads, targets and
how they ended. Upgrade ids are also in ` + "`inplace status`" + ` and at the end
of ` + "`inplace events tail`" + ` lines.

With --fleet (connected to the hub's NATS) trace shows one push through the
fleet, the newest or the PUSH named, in time order: when it started, each
stage's approval, release and analysis, each cluster it was sent to, every
rollout outcome a member reported for it (from the hub's FLEET stream, with
the cluster, workload, upgrade id and counts) and the halt; the upgrade ids
trace further on each member's own NATS.`,
		Example: `  inplace trace
  inplace trace u-1a2b3c4d5e6f
  inplace trace u-1a2b3c4d5e6f -o table
  inplace trace u-1a2b3c4d5e6f -o json | jq '.pods[] | select(.outcome != "succeeded")'
  inplace trace --fleet 3f2a9c... --nats-url nats://hub:4222`,
		Args: cobra.MaximumNArgs(1),
	}
	o.conn.bind(cmd.Flags())
	cmd.Flags().StringVar(&o.since, "since", "", "read the stream from then on (faster on a long stream): a duration back (2h) or an RFC 3339 time; "+
		"without an upgrade id the default is 24h")
	cmd.Flags().BoolVar(&o.fleet, "fleet", false, "trace one push through the fleet (the newest, or the PUSH id given) from the hub's fleet bucket and FLEET stream")
	cmd.Flags().StringVar(&o.fleetBucket, "fleet-bucket", defaultFleetBucket, "the hub's KV bucket holding the fleet records (with --fleet)")
	cmd.Flags().IntVar(&o.limit, "limit", 20, "without an upgrade id: list at most this many upgrades (0: all)")
	checkOutput := outputFlag(cmd.Flags(), &o.output, "tree", "table", "json", "yaml")
	completeOutput(cmd, "tree", "table", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(); err != nil {
			return err
		}
		if o.fleet {
			push := ""
			if len(args) == 1 {
				push = args[0]
			}
			return runFleetTrace(cmd, &o, push)
		}
		if len(args) == 0 {
			return runTraceList(cmd, &o)
		}
		return runTrace(cmd, &o, args[0])
	}
	return cmd
}

// runTraceList lists the recent upgrades, for the operator to pick one.
func runTraceList(cmd *cobra.Command, o *traceOptions) error {
	since := o.since
	if since == "" {
		since = "24h"
	}
	from, err := history.ParseTime(since, time.Now())
	if err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	c, s, err := o.conn.openStream(cmd.Context())
	if err != nil {
		return err
	}
	defer c.nc.Close()
	var recs []history.Record
	q := history.Query{Filter: history.Filter{Types: history.RecentTypes}, Since: from}
	if err := s.Read(cmd.Context(), q, func(r history.Record) error { recs = append(recs, r); return nil }); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	ups := history.Recent(recs, o.limit)
	out := cmd.OutOrStdout()
	if o.output == "json" || o.output == "yaml" {
		if ups == nil {
			ups = []history.Upgrade{}
		}
		_, err := writeStructured(out, o.output, ups)
		return err
	}
	if len(ups) == 0 {
		_, err := fmt.Fprintf(out, "no upgrade on stream %s since %s (--since 168h looks further back)\n", o.conn.stream, from.Local().Format(time.RFC3339))
		return err
	}
	if err := history.WriteRecent(out, ups, time.Now()); err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, "\ninplace trace UPGRADE shows one of them")
	return err
}

func runTrace(cmd *cobra.Command, o *traceOptions, upgradeID string) error {
	since, err := history.ParseTime(o.since, time.Now())
	if err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	c, s, err := o.conn.openStream(cmd.Context())
	if err != nil {
		return err
	}
	defer c.nc.Close()
	recs, err := history.Collect(cmd.Context(), s, upgradeID, since)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("trace %s: no event of this upgrade in stream %s (it may be older than the stream's retention)", upgradeID, o.conn.stream)
	}
	t := history.Build(upgradeID, recs)
	out := cmd.OutOrStdout()
	switch o.output {
	case "table":
		return history.WriteTable(out, t, time.Local)
	case "json", "yaml":
		_, err := writeStructured(out, o.output, t)
		return err
	}
	return history.WriteTree(out, t, time.Local)
}
