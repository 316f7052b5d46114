package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type importOptions struct {
	conn        natsFlags
	skipInvalid bool
	create      bool
}

func newImportCmd() *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Publish the events of a JSON lines file on the stream",
		Long: `import reads a file written by ` + "`inplace events export`" + ` (or any file of
CloudEvents in JSON, one per line; - reads standard input), checks every
line, and publishes the events on the stream in file order. If any line is
malformed nothing is published and each bad line is named with its number;
--skip-invalid publishes the valid lines and reports the others.

Events keep their ids. The stream drops an id it has already stored within
its dedup window (shown at the end), so importing a file twice, or into the
stream it came from, stores nothing new within that window; after it, the
same events are stored again. Events the stream stores are delivered to the
functions of a running ` + "`inplace run`" + ` like any other: importing an
image.pushed into a live system starts a rollout. To study a history, import
it into a stream no ` + "`inplace run`" + ` serves: another --stream name or
another server, with --create to set the stream up as ` + "`inplace run`" + ` would.
Dead letters (from tail --dlq -o json) are refused.`,
		Example: `  inplace events import rollout.jsonl
  inplace events export --nats-url nats://prod:4222 | inplace events import --stream STUDY --create -`,
		Args: cobra.ExactArgs(1),
	}
	o.conn.bind(cmd.Flags())
	cmd.Flags().BoolVar(&o.skipInvalid, "skip-invalid", false, "publish the valid lines even when others are malformed")
	cmd.Flags().BoolVar(&o.create, "create", false, "set up the stream (inplace run's defaults) when it does not exist")
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return runImport(cmd, &o, args[0]) }
	return cmd
}

// badLine is a line import refuses.
type badLine struct {
	n   int
	err error
}

func runImport(cmd *cobra.Command, o *importOptions, path string) error {
	recs, bad, err := readImportFile(cmd.InOrStdin(), path)
	if err != nil {
		return err
	}
	if len(bad) > 0 && !o.skipInvalid {
		return fmt.Errorf("import %s: %d malformed lines, nothing published (--skip-invalid publishes the rest):\n%s",
			path, len(bad), formatBad(bad))
	}
	c, s, err := o.conn.open(cmd.Context(), o.create)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	fresh, dup := 0, 0
	for _, r := range recs {
		d, err := s.Publish(cmd.Context(), r.Event)
		if err != nil {
			return fmt.Errorf("import %s: after %d events: %w", path, fresh+dup, err)
		}
		if d {
			dup++
		} else {
			fresh++
		}
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "imported %d events: %d new, %d already in the stream (dedup window %s)\n", fresh+dup, fresh, dup, s.DedupWindow())
	if len(bad) > 0 {
		fmt.Fprintf(out, "skipped %d malformed lines:\n%s", len(bad), formatBad(bad))
	}
	return nil
}

// readImportFile parses and checks every line; blank lines are ignored.
func readImportFile(stdin io.Reader, path string) ([]history.Record, []badLine, error) {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		in = f
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	var recs []history.Record
	var bad []badLine
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		r, err := history.ParseLine([]byte(line))
		if err == nil {
			err = history.CheckImport(r)
		}
		if err != nil {
			bad = append(bad, badLine{n, err})
			continue
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("import %s: %w", path, err)
	}
	return recs, bad, nil
}

func formatBad(bad []badLine) string {
	var b strings.Builder
	for i, l := range bad {
		if i == 20 {
			fmt.Fprintf(&b, "  ... and %d more\n", len(bad)-i)
			break
		}
		fmt.Fprintf(&b, "  line %d: %v\n", l.n, l.err)
	}
	return b.String()
}
