package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type tailOptions struct {
	conn    natsFlags
	types   []string
	upgrade string
	since   string
	all     bool
	dlq     bool
	output  string
}

func newTailCmd() *cobra.Command {
	var o tailOptions
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Follow the events as they happen, one line each",
		Long: `tail prints each event stored on the stream as one line: time, type,
subject, what it says (outcome events start with succeeded, failed or
rolledback and the reason), and its upgrade id. It follows new events until
interrupted; --since or --all start earlier. -o json prints each event as
one CloudEvent in JSON (structured mode) per line, with the extensions
inplaceseq and inplacestored saying where it sits in the stream; -o yaml
prints the same as one YAML document each.

--dlq adds the dead letters (events a function gave up on), with the
function and the reason.`,
		Example: `  inplace events tail
  inplace events tail --type upgrade.rolledback,upgrade.failed --since 1h
  inplace events tail --upgrade u-1a2b3c4d5e6f --all -o json`,
		Args: cobra.NoArgs,
	}
	o.conn.bind(cmd.Flags())
	cmd.Flags().StringSliceVar(&o.types, "type", nil, "only these event types (upgrade.planned, upgrade.*, ...); repeat or comma-separate")
	cmd.Flags().StringVar(&o.upgrade, "upgrade", "", "only events of this upgrade id")
	cmd.Flags().StringVar(&o.since, "since", "", "start with events stored since then: a duration back (10m) or an RFC 3339 time")
	cmd.Flags().BoolVar(&o.all, "all", false, "start with the first event the stream holds")
	cmd.Flags().BoolVar(&o.dlq, "dlq", false, "show dead letters too")
	checkOutput := outputFlag(cmd.Flags(), &o.output, "table", "json", "yaml")
	completeOutput(cmd, "table", "json", "yaml")
	cmd.MarkFlagsMutuallyExclusive("since", "all")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(); err != nil {
			return err
		}
		return runTail(cmd, &o)
	}
	return cmd
}

func runTail(cmd *cobra.Command, o *tailOptions) error {
	types, err := parseTypes(o.types)
	if err != nil {
		return err
	}
	since, err := history.ParseTime(o.since, time.Now())
	if err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	c, s, err := o.conn.openStream(cmd.Context())
	if err != nil {
		return err
	}
	defer c.nc.Close()
	q := history.Query{
		Filter: history.Filter{Types: types, UpgradeID: o.upgrade, DeadLetters: o.dlq},
		Since:  since, New: since.IsZero() && !o.all, Follow: true,
	}
	return s.Read(cmd.Context(), q, printRecord(cmd.OutOrStdout(), o.output))
}

// printRecord writes each record as a line of text, a line of JSON, or a
// YAML document (each starting with ---, as kubectl get -w -o yaml).
func printRecord(w io.Writer, output string) func(history.Record) error {
	return func(r history.Record) error {
		if output != "table" {
			if r.Err != nil {
				return nil // not a CloudEvent: nothing to print as one
			}
			b, err := history.MarshalLine(r)
			if err != nil {
				return err
			}
			if output == "yaml" {
				if b, err = yaml.JSONToYAML(b); err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "---\n%s", b)
				return err
			}
			_, err = fmt.Fprintf(w, "%s\n", b)
			return err
		}
		_, err := fmt.Fprintln(w, history.Line(r, time.Local))
		return err
	}
}
