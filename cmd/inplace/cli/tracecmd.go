package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/pkg/history"
)

type traceOptions struct {
	conn   natsFlags
	since  string
	output string
}

func newTraceCmd() *cobra.Command {
	var o traceOptions
	cmd := &cobra.Command{
		Use:   "trace UPGRADE-ID",
		Short: "Show the whole chain of one rollout, per pod, with timings",
		Long: `trace reads every event of one upgrade from the stream (those with its
upgrade id, its dead letters, and the image.pushed that started it, found
by the W3C trace id its first plans continue) and shows them grouped per
pod in time order: planned, prepulled, patched, what the kubelet reported,
and the outcome with its reason and message, each with the time since the
step before; then how the rollout ended.

Upgrade ids are in ` + "`inplace status`" + ` and at the end of ` + "`inplace events tail`" + ` lines.`,
		Example: `  inplace trace u-1a2b3c4d5e6f
  inplace trace u-1a2b3c4d5e6f -o table
  inplace trace u-1a2b3c4d5e6f -o json | jq '.pods[] | select(.outcome != "succeeded")'`,
		Args: cobra.ExactArgs(1),
	}
	o.conn.bind(cmd.Flags())
	cmd.Flags().StringVar(&o.since, "since", "", "read the stream from then on (faster on a long stream): a duration back (2h) or an RFC 3339 time")
	checkOutput := outputFlag(cmd.Flags(), &o.output, "tree", "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(); err != nil {
			return err
		}
		return runTrace(cmd, &o, args[0])
	}
	return cmd
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
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	return history.WriteTree(out, t, time.Local)
}
