package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

type replayFlags struct {
	nats    natsFlags
	since   string
	seq     uint64
	upgrade string
	file    string
	to      string
	dryRun  bool
	start   bool
	name    string
	kube    kubeFlags
	output  string
}

func newReplayCmd() *cobra.Command {
	var f replayFlags
	var checkOutput func() error
	cmd := &cobra.Command{
		Use:   "replay (--since T | --seq N | --upgrade ID | -f FILE) [--to FUNCTION] [--dry-run]",
		Short: "Feed recorded events through the functions again",
		Long: `replay takes recorded events (from the stream, or a file written by
'inplace events export') and feeds them through the functions again.

Each replayed event is a copy with an id of its own and the inplacereplay
extension naming the replay, so the stream does not drop it as a duplicate
and nobody mistakes it for a new event; what the functions derive from it
carries the marker too. A replayed push (or resume) starts no rollout:
compute-spec dead-letters it with the reason, unless --start-rollouts says
it should. Even then a push never takes a workload back to a digest it left
or older than the newest it rolled out.

Without --dry-run the copies are published on the stream and the running
functions handle them. With --dry-run the functions run here, every write
they would make to the API server is a server-side dry run (validated,
computed, not stored) shown as a diff, and their rollout state is a copy in
memory: a way to see what a past event would do today without touching the
cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(); err != nil {
				return err
			}
			return runReplay(cmd, &f)
		},
	}
	fs := cmd.Flags()
	f.nats.bind(fs)
	fs.StringVar(&f.since, "since", "", "replay events stored since this time (10m, RFC3339)")
	fs.Uint64Var(&f.seq, "seq", 0, "replay events from this stream sequence on")
	fs.StringVar(&f.upgrade, "upgrade", "", "replay the events of one upgrade (and the push that started it)")
	fs.StringVarP(&f.file, "file", "f", "", "replay the events of an export file (- for standard input)")
	fs.StringVar(&f.to, "to", "", "feed only this function (compute-spec, pre-pull, patch-pod, verify)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "run the functions here with server-side dry-run writes, and print diffs")
	fs.BoolVar(&f.start, "start-rollouts", false, "let replayed pushes and resumes start real rollouts (never backwards)")
	fs.StringVar(&f.name, "name", "", "name of the replay (default replay-<time>)")
	f.kube.bind(fs, "")
	checkOutput = outputFlag(fs, &f.output, "table", "json", "yaml")
	completeOutput(cmd, "table", "json", "yaml")
	return cmd
}

func runReplay(cmd *cobra.Command, f *replayFlags) error {
	if n := countSet(f.since != "", f.seq > 0, f.upgrade != "", f.file != ""); n != 1 {
		return errors.New("name exactly one of --since, --seq, --upgrade, -f")
	}
	consumers := consumerTypes()
	if _, ok := consumers[f.to]; f.to != "" && !ok {
		return fmt.Errorf("--to %q: not a function (compute-spec, pre-pull, patch-pod, verify)", f.to)
	}
	if f.name == "" {
		f.name = "replay-" + time.Now().UTC().Format("20060102T150405")
	}
	evs, err := recorded(cmd.Context(), f)
	if err != nil {
		return err
	}
	var picked []cloudevents.Event
	for _, e := range evs {
		if events.Ext(e, events.ExtReplay) == "" && replay.Takes(consumers, f.to, e.Type()) {
			picked = append(picked, e)
		}
	}
	if f.dryRun {
		return dryRunReplay(cmd, f, picked)
	}
	return publishReplay(cmd, f, picked)
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// consumerTypes maps each function to the event types it takes.
func consumerTypes() map[string][]string {
	m := map[string][]string{}
	for _, c := range app.Consumers {
		m[c.Name] = c.Types
	}
	return m
}

// recorded reads the events the flags select, in stream (or file) order.
func recorded(ctx context.Context, f *replayFlags) ([]cloudevents.Event, error) {
	if f.file != "" {
		return readFile(f.file)
	}
	c, s, err := f.nats.openStream(ctx)
	if err != nil {
		return nil, err
	}
	defer c.nc.Close()
	var recs []history.Record
	switch {
	case f.upgrade != "":
		recs, err = history.Collect(ctx, s, f.upgrade, time.Time{})
	default:
		q := history.Query{StartSeq: f.seq}
		if f.since != "" {
			if q.Since, err = history.ParseTime(f.since, time.Now()); err != nil {
				return nil, fmt.Errorf("--since: %w", err)
			}
		}
		err = s.Read(ctx, q, func(r history.Record) error { recs = append(recs, r); return nil })
	}
	if err != nil {
		return nil, err
	}
	var out []cloudevents.Event
	for _, r := range recs {
		if r.Dead == nil && r.Err == nil {
			out = append(out, r.Event)
		}
	}
	return out, nil
}

func readFile(path string) ([]cloudevents.Event, error) {
	var in io.Reader = os.Stdin
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		in = fh
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []cloudevents.Event
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		r, err := history.ParseLine(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if r.Dead == nil {
			out = append(out, r.Event)
		}
	}
	return out, sc.Err()
}

// publishReplay puts the marked copies on the stream for the running functions.
func publishReplay(cmd *cobra.Command, f *replayFlags, evs []cloudevents.Event) error {
	c, s, err := f.nats.openStream(cmd.Context())
	if err != nil {
		return err
	}
	defer c.nc.Close()
	published := 0
	for _, e := range evs {
		dup, err := s.Publish(cmd.Context(), replay.Mark(e, f.name, f.start))
		if err != nil {
			return err
		}
		if !dup {
			published++
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "replay %s: published %d of %d events (the rest were already replayed under this name)\n",
		f.name, published, len(evs))
	return nil
}
