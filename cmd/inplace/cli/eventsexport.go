package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type exportOptions struct {
	conn    natsFlags
	since   string
	until   string
	upgrade string
	types   []string
}

func newExportCmd() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the stored events as JSON lines",
		Long: `export writes the events the stream holds, oldest first, one per line:
a CloudEvent in JSON (structured mode) with two extension attributes saying
where it sat in the stream, inplaceseq (the stream sequence, as a string)
and inplacestored (when it was stored, RFC 3339). It stops at the last
event stored when it started. Dead letters are not exported.

The file is what ` + "`inplace events import`" + ` reads.`,
		Example: `  inplace events export > all.jsonl
  inplace events export --upgrade u-1a2b3c4d5e6f > rollout.jsonl
  inplace events export --since 2026-11-20T10:00:00Z --until 2026-11-20T11:00:00Z > hour.jsonl`,
		Args: cobra.NoArgs,
	}
	o.conn.bind(cmd.Flags())
	cmd.Flags().StringVar(&o.since, "since", "", "events stored since then: a duration back (10m) or an RFC 3339 time")
	cmd.Flags().StringVar(&o.until, "until", "", "events stored until then: a duration back (10m) or an RFC 3339 time")
	cmd.Flags().StringVar(&o.upgrade, "upgrade", "", "only events of this upgrade id")
	cmd.Flags().StringSliceVar(&o.types, "type", nil, "only these event types; repeat or comma-separate")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runExport(cmd, &o) }
	return cmd
}

func runExport(cmd *cobra.Command, o *exportOptions) error {
	types, err := parseTypes(o.types)
	if err != nil {
		return err
	}
	now := time.Now()
	since, err := history.ParseTime(o.since, now)
	if err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	until, err := history.ParseTime(o.until, now)
	if err != nil {
		return fmt.Errorf("--until: %w", err)
	}
	c, s, err := o.conn.openStream(cmd.Context())
	if err != nil {
		return err
	}
	defer c.nc.Close()
	q := history.Query{Filter: history.Filter{Types: types, UpgradeID: o.upgrade}, Since: since, Until: until}
	n, err := writeLines(cmd.Context(), s, q, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "exported %d events\n", n)
	return nil
}

// writeLines writes the records q selects as JSON lines and counts them;
// a message that is not a CloudEvent is reported on errW and skipped.
func writeLines(ctx context.Context, s *history.Stream, q history.Query, out, errW io.Writer) (int, error) {
	w := bufio.NewWriter(out)
	n := 0
	err := s.Read(ctx, q, func(r history.Record) error {
		if r.Err != nil {
			fmt.Fprintf(errW, "skipped message #%d on %s: %v\n", r.Seq, r.Subject, r.Err)
			return nil
		}
		b, err := history.MarshalLine(r)
		if err != nil {
			return err
		}
		n++
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	})
	if err != nil {
		return n, err
	}
	return n, w.Flush()
}
