package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type upgradeFlags struct {
	nats       natsFlags
	kube       kubeFlags
	image      string
	containers []string
	resolve    bool
	allowOlder bool
	timeout    time.Duration
}

func newUpgradeCmd() *cobra.Command {
	var f upgradeFlags
	cmd := &cobra.Command{
		Use:   "upgrade KIND/NAME --image REPO:TAG [-c CONTAINER]",
		Short: "Upgrade one workload in place now, through the same chain as a push",
		Long: `upgrade is what a hand-written patch script does, done right: it asks
(upgrade.requested, which only the operator's NATS identity may publish) for
--image on one workload (deployment/NAME, statefulset/NAME, daemonset/NAME,
replicaset/NAME or pod/NAME), and the running functions take
it through the same policy checks, waves, pre-pull, verify and rollback as a
registry webhook. It shows the plan first, then the progress until the
rollout completes (exit 0) or halts (exit 1).

The workload must have opted in (inplace.dev/policy). The tag is resolved to
its digest through the registry (your docker credentials) so every pod gets
the same bytes; --resolve=false skips that.

A workload never goes backwards on its own: a digest it already left, or a
push older than the newest it rolled out, is refused whatever its policy.
--allow-older goes back on purpose (the policy still applies).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkload,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUpgrade(cmd, &f, args[0])
		},
	}
	fs := cmd.Flags()
	f.nats.bind(fs)
	f.kube.bind(fs, "namespace of the workload (default: the kubeconfig context's)")
	fs.StringVar(&f.image, "image", "", "the image to move to, REPO:TAG[@DIGEST]")
	_ = cmd.MarkFlagRequired("image")
	containersFlag(fs, &f.containers, "only these containers (default: every container of the repository)")
	fs.BoolVar(&f.resolve, "resolve", true, "resolve the tag to its digest through the registry")
	fs.BoolVar(&f.allowOlder, "allow-older", false, "go back on purpose: to a digest the workload left, or an older push")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "give up waiting after this long (the rollout goes on)")
	return cmd
}

func runUpgrade(cmd *cobra.Command, f *upgradeFlags, arg string) error {
	ctx := cmd.Context()
	image, err := pushOf(f.image)
	if err != nil {
		return err
	}
	push := events.UpgradeRequestData{ImagePushedData: image, Containers: f.containers, AllowOlder: f.allowOlder}
	if push.Digest == "" && f.resolve {
		if push.Digest, err = resolveDigest(ctx, f.image); err != nil {
			if errors.Is(err, errNoSuchImage) {
				return fmt.Errorf("%w; nothing was started (--resolve=false goes on anyway)", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v; going on without a digest (the nodes pull the tag with their own credentials)\n", err)
		}
	}
	ks, err := f.kube.session()
	if err != nil {
		return err
	}
	ref, err := ks.resolve(ctx, arg)
	if err != nil {
		return err
	}
	push.Target = &ref
	if err := precheck(cmd, ks, push); err != nil {
		return err
	}
	c, s, err := f.nats.openStream(ctx)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	return publish(cmd, s, ref, push, f.timeout)
}

// publish asks for the upgrade of one workload (upgrade.requested, which
// only the operator's identity may publish) and follows its rollout to the
// end.
func publish(cmd *cobra.Command, s *history.Stream, ref events.ObjectRef, push events.UpgradeRequestData, timeout time.Duration) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	start := time.Now().Add(-time.Second)
	id := events.DeriveID("manual/"+ref.String(), events.UpgradeRequested, push.Ref()+"/"+start.UTC().Format(time.RFC3339Nano))
	e, err := events.New(id, events.UpgradeRequested, events.Source("cli"), push.Ref(), push)
	if err != nil {
		return err
	}
	// The request carries the upgrade id compute-spec will give it, so a
	// refusal (its dead letter) is followed too.
	upgradeID := events.DeriveUpgradeID(id, ref)
	e.SetExtension(events.ExtUpgradeID, upgradeID)
	if _, err := s.Publish(ctx, e); err != nil {
		return err
	}
	fmt.Fprintf(out, "upgrade %s: %s → %s\n", upgradeID, ref, push.Ref())
	return follow(ctx, cmd, s, upgradeID, start, timeout)
}

// precheck shows the plan and refuses a workload the push would leave
// alone, from reads of that workload and its pods within the deadline.
func precheck(cmd *cobra.Command, s *kubeSession, push events.UpgradeRequestData) error {
	ctx, cancel := s.reads(cmd.Context())
	defer cancel()
	snap, dry, err := dryRun(ctx, s, push.Target.Namespace, push)
	if err != nil {
		return err
	}
	plans, err := withAnalysis(ctx, s, snap, dry)
	if err != nil {
		return err
	}
	printPlans(cmd.OutOrStdout(), push.ImagePushedData, plans)
	if len(plans) == 1 && plans[0].Skip != "" {
		return fmt.Errorf("%s: %s", plans[0].Workload, plans[0].Skip)
	}
	return nil
}

// errFinished ends following: the rollout completed (nil result) or halted.
var errFinished = errors.New("finished")

// follow prints the upgrade's events until its rollout ends.
func follow(ctx context.Context, cmd *cobra.Command, s *history.Stream, upgradeID string, since time.Time, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var halted error
	q := history.Query{Filter: history.Filter{UpgradeID: upgradeID, DeadLetters: true}, Since: since, Follow: true}
	err := s.Read(ctx, q, func(r history.Record) error {
		fmt.Fprintln(cmd.OutOrStdout(), history.Line(r, time.Local))
		if r.Dead != nil && r.Event.Type() == events.UpgradeRequested {
			halted = fmt.Errorf("upgrade %s refused: %s", upgradeID, r.Dead.Reason)
			return errFinished
		}
		switch r.Event.Type() {
		case events.RolloutCompleted:
			return errFinished
		case events.RolloutHalted:
			d, _ := events.As[events.RolloutData](r.Event)
			halted = fmt.Errorf("rollout %s halted: %s: %s", upgradeID, d.Reason, d.Message)
			return errFinished
		}
		return nil
	})
	switch {
	case errors.Is(err, errFinished):
		return halted
	case ctx.Err() != nil:
		return fmt.Errorf("stopped waiting after %s; the rollout goes on (inplace status, inplace trace %s)", timeout, upgradeID)
	}
	return err
}
