package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

// dryRunReplay runs the events through functions built here on a dry-run client.
func dryRunReplay(cmd *cobra.Command, f *replayFlags, evs []cloudevents.Event) error {
	// The informers and the functions built here end with the command,
	// also when it runs in a longer-lived process (the demo).
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	s, err := f.kube.session()
	if err != nil {
		return err
	}
	live, err := kube.Client(s.watchConfig())
	if err != nil {
		return err
	}
	writes := &kube.DryRun{}
	client, err := kube.Client(writes.Wrap(s.cfg))
	if err != nil {
		return err
	}
	cache, defaults, err := replayReads(ctx, s, live)
	if err != nil {
		return err
	}
	defer func() { cancel(); cache.Shutdown() }()
	names := []string{f.to}
	if f.to == "" {
		names = []string{"compute-spec", "pre-pull", "patch-pod", "verify"}
	}
	fns, _ := app.Functions(ctx, names, app.FunctionDeps{Kube: client, Cache: cache, Store: replay.NewMemStore(rolloutSeed(ctx, f)),
		Defaults: config.NewStore(defaults, slog.New(slog.DiscardHandler)), Log: slog.New(slog.DiscardHandler)})
	dr := &replay.DryRunner{Functions: fns, Writes: writes, Live: live.CoreV1().RESTClient()}
	var all []replay.Result
	for _, e := range evs {
		rs, err := dr.Run(ctx, replay.Mark(e, f.name, f.start), f.to)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "skipping %s %s: %v\n", e.Type(), e.ID(), err)
			continue
		}
		all = append(all, rs...)
	}
	if f.output != "table" {
		return writeResultsStructured(cmd.OutOrStdout(), f.output, all)
	}
	writeResults(cmd.OutOrStdout(), f.name, len(evs), all)
	return nil
}

// replayReads starts the functions' informers on live and reads
// config-inplace, waiting for both within the session's deadline.
func replayReads(ctx context.Context, s *kubeSession, live kubernetes.Interface) (*kube.Cache, config.Defaults, error) {
	reads, cancel := s.reads(ctx)
	defer cancel()
	defaults, err := loadDefaults(reads, s, s.flags.configNamespace)
	if err != nil {
		return nil, config.Defaults{}, err
	}
	cache, err := kube.NewCache(live, 0)
	if err != nil {
		return nil, config.Defaults{}, err
	}
	if err := cache.StartWithin(ctx, s.deadline); err != nil {
		return nil, config.Defaults{}, s.reach(err)
	}
	return cache, defaults, nil
}

// rolloutSeed copies the rollout bucket, so compute-spec starts from the
// state the running system has; without NATS it starts empty.
func rolloutSeed(ctx context.Context, f *replayFlags) map[string][]byte {
	seed := map[string][]byte{}
	c, err := f.nats.connect()
	if err != nil {
		return seed
	}
	defer c.nc.Close()
	kv, err := c.js.KeyValue(ctx, bus.DefaultConfig().KVBucket)
	if err != nil {
		return seed
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return seed
	}
	for k := range keys.Keys() {
		if e, err := kv.Get(ctx, k); err == nil {
			seed[k] = e.Value()
		}
	}
	return seed
}

func writeResults(w io.Writer, name string, n int, rs []replay.Result) {
	fmt.Fprintf(w, "replay %s (dry run): %d events\n", name, n)
	changes := 0
	for _, r := range rs {
		fmt.Fprintf(w, "\n%s %s → %s: %s\n", events.Short(r.Event.Type()), r.Event.Subject(), r.Function, r.Settlement)
		if r.Reason != "" {
			fmt.Fprintf(w, "  %s\n", r.Reason)
		}
		for _, o := range r.Outputs {
			fmt.Fprintf(w, "  would emit %s %s\n", events.Short(o.Type()), o.Subject())
		}
		for _, c := range r.Changes {
			switch {
			case c.Refused != "":
				fmt.Fprintf(w, "  the API server would refuse %s %s: %s\n", c.Verb, c.Path, c.Refused)
			case c.Diff == "":
				fmt.Fprintf(w, "  %s %s would change nothing\n", c.Verb, c.Path)
			default:
				changes++
				fmt.Fprintf(w, "  would %s %s:\n%s", c.Verb, c.Path, indent(c.Diff, "    "))
			}
		}
	}
	if changes == 0 {
		fmt.Fprintf(w, "\nnothing in the cluster would change\n")
	} else {
		fmt.Fprintf(w, "\n%d change(s) would be made to the cluster (none was)\n", changes)
	}
}

func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "")
}

type jsonResult struct {
	Function   string          `json:"function"`
	Event      jsonEventRef    `json:"event"`
	Settlement string          `json:"settlement"`
	Reason     string          `json:"reason,omitempty"`
	Outputs    []jsonEventRef  `json:"outputs,omitempty"`
	Changes    []replay.Change `json:"changes,omitempty"`
}

type jsonEventRef struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Subject string `json:"subject"`
}

func writeResultsStructured(w io.Writer, format string, rs []replay.Result) error {
	out := make([]jsonResult, 0, len(rs))
	for _, r := range rs {
		j := jsonResult{Function: r.Function, Settlement: r.Settlement, Reason: r.Reason, Changes: r.Changes,
			Event: jsonEventRef{r.Event.ID(), r.Event.Type(), r.Event.Subject()}}
		for _, o := range r.Outputs {
			j.Outputs = append(j.Outputs, jsonEventRef{o.ID(), o.Type(), o.Subject()})
		}
		out = append(out, j)
	}
	_, err := writeStructured(w, format, out)
	return err
}
