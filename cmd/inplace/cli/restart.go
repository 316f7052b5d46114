package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type restartFlags struct {
	nats       natsFlags
	kube       kubeFlags
	containers []string
	strategy   events.RestartStrategy
	reason     string
	timeout    time.Duration
	wait       bool
}

func newRestartCmd() *cobra.Command {
	var f restartFlags
	cmd := &cobra.Command{
		Use:   "restart KIND/NAME -c CONTAINER [-c CONTAINER...]",
		Short: "Restart containers of running pods in place, on the bytes they run",
		Long: `restart announces a container.restart.requested for one workload
(deployment/NAME, statefulset/NAME, daemonset/NAME, replicaset/NAME) or a bare
pod (pod/NAME), and the running functions restart the named containers of its
pods in place: same pod, UID, IP, node and volumes, same image digest, the
container's restartCount one up. No node agent is needed: the container's image
is switched to another reference to the same bytes (tag@digest and digest), so
the kubelet restarts it; the next restart switches back. Pods go in waves
within the workload's max-unavailable; the template is left as it is.

The workload must have opted in (inplace.dev/policy). The strategy flags are
those of OpenKruise's ContainerRecreateRequest. It shows the progress until the
request succeeds (exit 0) or fails (exit 1).`,
		Example: `  inplace restart deployment/web -c app
  inplace restart pod/web-7d9c-x2x -c app -c sidecar --ordered --unready-grace-seconds 5 --min-started-seconds 10`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkload,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRestart(cmd, &f, args[0])
		},
	}
	fs := cmd.Flags()
	f.nats.bind(fs)
	f.kube.bind(fs, "namespace of the workload (default: the kubeconfig context's)")
	containersFlag(fs, &f.containers, "the containers to restart")
	_ = cmd.MarkFlagRequired("container")
	fs.StringVar(&f.strategy.FailurePolicy, "failure-policy", events.FailurePolicyFail,
		"Fail: a container that does not come back fails the request; Ignore: go on with the other pods")
	fs.BoolVar(&f.strategy.OrderedRecreate, "ordered", false, "restart the containers one after the other, in the order given")
	fs.IntVar(&f.strategy.UnreadyGracePeriodSeconds, "unready-grace-seconds", 0,
		"keep the pod NotReady (readiness gate inplace.dev/ready) this long before the restart")
	fs.IntVar(&f.strategy.MinStartedSeconds, "min-started-seconds", 0, "a restarted container must stay started this long")
	fs.IntVar(&f.strategy.ActiveDeadlineSeconds, "active-deadline-seconds", 0, "fail a pod's restart not done within this long")
	fs.IntVar(&f.strategy.TTLSecondsAfterFinished, "ttl-seconds-after-finished", 0, "keep the request in inplace status this long once done")
	fs.StringVar(&f.reason, "reason", "", "why, recorded on each pod (inplace.dev/restart-reason) and in its Events")
	fs.BoolVar(&f.wait, "wait", true, "follow the request until it ends")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "give up waiting after this long (the restart goes on)")
	return cmd
}

func runRestart(cmd *cobra.Command, f *restartFlags, arg string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	d := events.RestartRequestData{Target: anyTarget, Containers: f.containers, Strategy: f.strategy, Reason: f.reason}
	if err := flagged(d.Validate(), restartFields); err != nil {
		return err
	}
	ref, err := readTarget(ctx, &f.kube, arg, f.containers)
	if err != nil {
		return err
	}
	d.Target = ref
	if err := d.Validate(); err != nil {
		return err
	}
	c, s, err := f.nats.openStream(ctx)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	start := time.Now().Add(-time.Second)
	id := events.DeriveID("restart/"+ref.String(), events.ContainerRestartRequested, strings.Join(f.containers, ",")+"/"+start.UTC().Format(time.RFC3339Nano))
	e, err := events.New(id, events.ContainerRestartRequested, events.Source("cli"), ref.String(), d)
	if err != nil {
		return err
	}
	requestID := events.DeriveRestartID(id, ref)
	e.SetExtension(events.ExtUpgradeID, requestID)
	if _, err := s.Publish(ctx, e); err != nil {
		return err
	}
	fmt.Fprintf(out, "restart %s: %s containers %s\n", requestID, ref, strings.Join(f.containers, ","))
	if !f.wait {
		return nil
	}
	return followRestart(ctx, cmd, s, requestID, start, f.timeout)
}

// followRestart prints the request's events until its result.
func followRestart(ctx context.Context, cmd *cobra.Command, s *history.Stream, requestID string, since time.Time, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var failed error
	q := history.Query{Filter: history.Filter{UpgradeID: requestID, DeadLetters: true}, Since: since, Follow: true}
	err := s.Read(ctx, q, func(r history.Record) error {
		fmt.Fprintln(cmd.OutOrStdout(), history.Line(r, time.Local))
		switch {
		case r.Dead != nil && r.Event.Type() == events.ContainerRestartRequested:
			failed = fmt.Errorf("restart %s refused: %s", requestID, r.Dead.Reason)
			return errFinished
		case r.Event.Type() == events.ContainerRestartSucceeded:
			return errFinished
		case r.Event.Type() == events.ContainerRestartFailed:
			d, _ := events.As[events.RestartResultData](r.Event)
			failed = fmt.Errorf("restart %s failed: %s: %s", requestID, d.Reason, d.Message)
			return errFinished
		}
		return nil
	})
	switch {
	case errors.Is(err, errFinished):
		return failed
	case ctx.Err() != nil:
		return fmt.Errorf("stopped waiting after %s; the restart goes on (inplace status)", timeout)
	}
	return err
}
