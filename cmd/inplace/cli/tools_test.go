package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/tools/history/historytest"
	"github.com/inplace-dev/inplace/test/world"
)

// toolWorld is a real in-process NATS with the stream set up as `inplace
// run` sets it up, and the URL the tools connect to.
type toolWorld struct {
	bus *bus.Bus
	url string
}

func newToolWorld(t *testing.T) *toolWorld {
	t.Helper()
	s := bustest.Server(t)
	b, err := bus.Connect(t.Context(), bustest.Conn(t, s), bustest.Config(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return &toolWorld{bus: b, url: s.URL()}
}

func (w *toolWorld) publish(t *testing.T, evs []cloudevents.Event) {
	t.Helper()
	if err := historytest.Publish(t.Context(), w.bus, evs); err != nil {
		t.Fatal(err)
	}
}

// run executes `inplace <args> --nats-url <url>` and returns its output.
func (w *toolWorld) run(ctx context.Context, t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := w.runTo(ctx, &out, &errOut, stdin, args...)
	return out.String(), errOut.String(), err
}

func (w *toolWorld) runTo(ctx context.Context, out, errOut interface{ Write([]byte) (int, error) }, stdin string, args ...string) error {
	// A root of its own: the test does not depend on root.go wiring.
	root := &cobra.Command{Use: "inplace", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(toolCommands()...)
	root.SetArgs(append(args, "--nats-url", w.url))
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetIn(strings.NewReader(stdin))
	return root.ExecuteContext(ctx)
}

// syncBuffer is a bytes.Buffer a command writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds on the output, failing after a generous timeout.
func waitFor(t *testing.T, buf *syncBuffer, what string, cond func(string) bool) {
	t.Helper()
	if err := world.Eventually(t.Context(), 30*time.Second, what, func(context.Context) (bool, error) { return cond(buf.String()), nil }); err != nil {
		t.Fatalf("%v; output:\n%s", err, buf.String())
	}
}

const testDigest = "sha256:0b31b1c02ff458ad9b7b81cbdf8f028bd54699fa151f221d1e8de6817db93427"

// rolloutFor is a rollout of workload name to tag: pods <name>-0 (wave 1)
// and <name>-1 (wave 2); the second is rolled back when fail is set.
func rolloutFor(name, tag string, fail bool) historytest.Rollout {
	r := historytest.Rollout{
		Push: events.ImagePushedData{Registry: "registry.example", Repository: "shop/" + name, Tag: tag,
			Digest: testDigest, PushedAt: time.Now(), Origin: "distribution"},
		Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: name, UID: "uid-" + name},
		Pods: []historytest.Pod{
			{Name: name + "-0", UID: "uid-" + name + "-0", Node: "node-1", Wave: 1},
			{Name: name + "-1", UID: "uid-" + name + "-1", Node: "node-2", Wave: 2},
		},
		Start: time.Now().Add(-30 * time.Second), Step: 100 * time.Millisecond,
	}
	if fail {
		r.Pods[1].Outcome, r.Pods[1].Reason = events.OutcomeRolledBack, "ImagePullBackOff"
		r.Pods[1].Message = `Back-off pulling image "registry.example/shop/` + name + `:` + tag + `"`
	}
	return r
}

func chain(t *testing.T, r historytest.Rollout) []cloudevents.Event {
	t.Helper()
	evs, err := r.Events()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// linesWith returns the lines of out containing s.
func linesWith(out, s string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			got = append(got, l)
		}
	}
	return got
}
