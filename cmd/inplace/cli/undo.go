package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type undoFlags struct {
	nats    natsFlags
	kube    kubeFlags
	bucket  string
	timeout time.Duration
}

func newUndoCmd() *cobra.Command {
	var f undoFlags
	cmd := &cobra.Command{
		Use:   "undo KIND/NAME",
		Short: "Move a workload's pods back in place to the images they ran before its last rollout",
		Long: `undo is kubectl rollout undo without a rollout: the pods of the workload
(deployment/NAME, statefulset/NAME, daemonset/NAME, replicaset/NAME or
pod/NAME) go back in place, through the same chain as an upgrade (pre-pull,
patch, verify, rollback of what fails), to the image their containers ran
before the last rollout that moved them, as its rollout record has it (the
digest they ran, under the tag their spec named); then the template follows,
again without a rollout. It shows the plan first, then the progress until
the rollout completes (exit 0) or halts (exit 1).

The rollout to undo must have ended (completed or halted). compute-spec
checks the undo against its record before anything moves; the never
backwards rule and the workload's policy (which would refuse going down a
version) let an undo through, and afterwards the digest undone counts as
left behind: a push of it is refused until an operator says otherwise
(inplace upgrade --allow-older).

kubectl rollout undo would instead go back by a rollout that replaces every
pod (StatefulSet, DaemonSet), or find nothing to go back to (a Deployment
keeps its revision through the template sync).`,
		Example:           "  inplace undo deployment/web -n shop\n  inplace undo statefulset/cart -n shop --timeout 10m",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkload,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUndo(cmd, &f, args[0])
		},
	}
	fs := cmd.Flags()
	f.nats.bind(fs)
	f.kube.bind(fs, "namespace of the workload (default: the kubeconfig context's)")
	fs.StringVar(&f.bucket, "kv-bucket", bus.DefaultConfig().KVBucket, "KV bucket holding the rollouts")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "give up waiting after this long (the rollout goes on)")
	return cmd
}

func runUndo(cmd *cobra.Command, f *undoFlags, arg string) error {
	ctx := cmd.Context()
	ks, err := f.kube.session()
	if err != nil {
		return err
	}
	ref, err := ks.resolve(ctx, arg)
	if err != nil {
		return err
	}
	c, s, err := f.nats.openStream(ctx)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	r, err := history.ReadRollout(ctx, c.js, f.bucket, ref)
	if err != nil {
		return err
	}
	push, last, err := undoPush(ref, r)
	if err != nil {
		return err
	}
	// The image must still be there: a rollout to it could only fail.
	if _, err := resolveDigest(ctx, push.Ref()); errors.Is(err, errNoSuchImage) {
		return fmt.Errorf("%s: the image its pods ran before %s is gone: %w; nothing was started", ref, last.UpgradeID, err)
	} else if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v; going on (the nodes pull it with their own credentials)\n", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "undo %s of %s: %s back from %s\n", last.UpgradeID, ref, last.Back.Ref(), last.Target)
	if err := precheck(cmd, ks, push); err != nil {
		return err
	}
	return publish(cmd, s, ref, push, f.timeout)
}

// undoPush is the request that undoes the last rollout of ref that moved
// pods, from its record r: the image they ran before it, restricted to the
// containers it moved, going back on purpose. compute-spec checks it
// against the same record.
func undoPush(ref events.ObjectRef, r *rollout.Rollout) (events.UpgradeRequestData, rollout.Moved, error) {
	if r == nil {
		return events.UpgradeRequestData{}, rollout.Moved{}, fmt.Errorf("%s: no rollout recorded, nothing to undo", ref)
	}
	if !r.Phase.Finished() && r.Phase != rollout.Halted {
		return events.UpgradeRequestData{}, rollout.Moved{}, fmt.Errorf("%s: upgrade %s is %s; undo it once it has ended (inplace status)",
			ref, r.UpgradeID, r.Phase)
	}
	last, err := rollout.Undoable(r)
	if err != nil {
		return events.UpgradeRequestData{}, last, fmt.Errorf("%s: cannot undo: %w", ref, err)
	}
	image, err := pushOf(last.Back.Ref())
	if err != nil {
		return events.UpgradeRequestData{}, last, fmt.Errorf("%s: the record's image %s: %w", ref, last.Back.Ref(), err)
	}
	// Not a new push: the time of the newest one the workload rolled out
	// stays its mark.
	image.PushedAt = time.Time{}
	return events.UpgradeRequestData{ImagePushedData: image, Target: &ref, Containers: last.Back.Containers,
		AllowOlder: true, Undo: last.UpgradeID}, last, nil
}
