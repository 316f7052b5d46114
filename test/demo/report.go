package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/inplace-dev/inplace/cmd/inplace/cli"
	"github.com/inplace-dev/inplace/events"
)

// table prints the before/after table and reports whether every pod kept
// its identity and restarted exactly once onto the pushed digest (its
// imageID too) and, on real nodes, whether its app answers the new tag.
func (sh *shop) table(before, after map[string]pod, digest string) bool {
	names := make([]string, 0, len(before))
	for n := range before {
		names = append(names, n)
	}
	sort.Strings(names)
	real := sh.w.IsReal()
	tw := tabwriter.NewWriter(sh.out, 0, 0, 2, ' ', 0)
	head := "POD\tNODE\tIP\tUID\tIMAGE\tIMAGE ID\tRESTARTS"
	if real {
		head += "\tGET /"
	}
	fmt.Fprintln(tw, head+"\tIN PLACE")
	ok := true
	for _, n := range names {
		b, a := before[n], after[n]
		kept := a.UID == b.UID && a.IP == b.IP && a.Node == b.Node && a.Restarts == b.Restarts+1 &&
			strings.HasSuffix(a.Image, "@"+digest) && strings.HasSuffix(a.ImageID, "@"+digest) &&
			(!real || a.Answer == newTag)
		mark := "✔"
		if !kept {
			mark, ok = "✘", false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s → %s\t%s → %s\t%d → %d", n, same(b.Node, a.Node), same(b.IP, a.IP),
			same(b.UID[:8], a.UID[:min(8, len(a.UID))]), tag(b.Image), tag(a.Image), short(b.ImageID), short(a.ImageID),
			b.Restarts, a.Restarts)
		if real {
			fmt.Fprintf(tw, "\t%s → %s", b.Answer, a.Answer)
		}
		fmt.Fprintf(tw, "\t%s\n", mark)
	}
	_ = tw.Flush()
	return ok
}

// short is an imageID's digest, abbreviated.
func short(imageID string) string {
	_, d, found := strings.Cut(imageID, "@sha256:")
	if !found {
		return imageID
	}
	return d[:min(12, len(d))]
}

// same shows a value that should not have changed, or both when it did.
func same(b, a string) string {
	if a == b {
		return a + " (same)"
	}
	return b + " → " + a
}

// replay runs `inplace replay --dry-run` on each finished upgrade and
// `inplace status`, as an operator would.
func (sh *shop) replay(ctx context.Context, done []events.RolloutData) error {
	if sh.kn != nil {
		return sh.statusKnative(ctx)
	}
	conn := []string{"--kubeconfig", sh.w.Cluster.Kubeconfig(), "--nats-url", sh.s.NATSURL, "--nats-credentials", sh.s.Credentials}
	for _, d := range done {
		fmt.Fprintf(sh.out, "\n$ inplace replay --upgrade %s --dry-run\n", d.UpgradeID)
		out, err := runCLI(ctx, append([]string{"replay", "--upgrade", d.UpgradeID, "--dry-run"}, conn...)...)
		if err != nil {
			return fmt.Errorf("replay %s: %w\n%s", d.UpgradeID, err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		fmt.Fprintf(sh.out, "  %s\n  …\n  %s\n", lines[0], lines[len(lines)-1])
		if !strings.Contains(out, "nothing in the cluster would change") {
			return fmt.Errorf("replaying %s would change the cluster:\n%s", d.UpgradeID, out)
		}
	}
	fmt.Fprintf(sh.out, "\n$ inplace status --all\n")
	out, err := runCLI(ctx, "status", "--all", "--nats-url", sh.s.NATSURL, "--nats-credentials", sh.s.Credentials)
	fmt.Fprint(sh.out, out)
	return err
}

func runCLI(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	root := cli.NewRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}
