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

type resizeFlags struct {
	nats     natsFlags
	kube     kubeFlags
	req      events.ResizeRequestData
	output   string
	timeout  time.Duration
	deadline time.Duration
	wait     bool
}

func newResizeCmd() *cobra.Command {
	var f resizeFlags
	cmd := &cobra.Command{
		Use:   "resize KIND/NAME -c CONTAINER [--cpu QUANTITY] [--memory QUANTITY]",
		Short: "Change the CPU and memory of running containers in place",
		Long: `resize announces a container.resize.requested for one workload
(deployment/NAME, statefulset/NAME, daemonset/NAME, replicaset/NAME) or a bare
pod (pod/NAME), and the running functions change the named containers' CPU
and/or memory through the pods/resize subresource: same pod, UID, IP and node;
the container restarts only where its resizePolicy says RestartContainer.
Each quantity sets the request, and the limit where it equalled the request
(a Guaranteed pod stays Guaranteed) or would be exceeded. Pods go in waves
within the workload's max-unavailable; a pod the node cannot resize
(Infeasible) or that is not resized within the deadline is resized back and
the request fails. Once every pod is resized, the workload's template gets the
new resources without a rollout.

The workload must have opted in (inplace.dev/policy). It shows the progress
until the request succeeds (exit 0) or fails (exit 1).`,
		Example: `  inplace resize deployment/web -c app --cpu 500m --memory 256Mi
  inplace resize pod/web-7d9c-x2x -n shop -c app --cpu 1 -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkload,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResize(cmd, &f, args[0])
		},
	}
	fs := cmd.Flags()
	f.nats.bind(fs)
	f.kube.bind(fs, "namespace of the workload (default: the kubeconfig context's)")
	containersFlag(fs, &f.req.Containers, "the containers to resize")
	_ = cmd.MarkFlagRequired("container")
	fs.StringVar(&f.req.CPU, "cpu", "", "the CPU to request (e.g. 500m, 2)")
	fs.StringVar(&f.req.Memory, "memory", "", "the memory to request (e.g. 256Mi, 1Gi)")
	fs.StringVar(&f.req.Reason, "reason", "", "why, recorded in each pod's Events")
	fs.DurationVar(&f.deadline, "deadline", 0, "resize a pod back when not resized within this long (default: the workload's verify deadline)")
	fs.BoolVar(&f.wait, "wait", true, "follow the request until it ends")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "give up waiting after this long (the resize goes on)")
	checkOutput := outputFlag(fs, &f.output, "table", "json", "yaml")
	completeOutput(cmd, "table", "json", "yaml")
	cmd.PreRunE = func(*cobra.Command, []string) error { return checkOutput() }
	return cmd
}

// resizeOutput is what -o json|yaml prints: the request and, when
// followed, how it ended.
type resizeOutput struct {
	RequestID string                   `json:"requestID"`
	Request   events.ResizeRequestData `json:"request"`
	Result    *events.ResizeResultData `json:"result,omitempty"`
	Type      string                   `json:"type,omitempty"`
}

func runResize(cmd *cobra.Command, f *resizeFlags, arg string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	if f.req.CPU == "" && f.req.Memory == "" {
		return errors.New("--cpu or --memory is required")
	}
	f.req.DeadlineSeconds = int(f.deadline.Round(time.Second) / time.Second)
	f.req.Target = anyTarget
	if err := flagged(f.req.Validate(), resizeFields); err != nil {
		return err
	}
	ref, err := readTarget(ctx, &f.kube, arg, f.req.Containers)
	if err != nil {
		return err
	}
	f.req.Target = ref
	if err := f.req.Validate(); err != nil {
		return err
	}
	c, s, err := f.nats.openStream(ctx)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	start := time.Now().Add(-time.Second)
	id := events.DeriveID("resize/"+ref.String(), events.ContainerResizeRequested,
		strings.Join(f.req.Containers, ",")+"/"+f.req.CPU+"/"+f.req.Memory+"/"+start.UTC().Format(time.RFC3339Nano))
	e, err := events.New(id, events.ContainerResizeRequested, events.Source("cli"), ref.String(), f.req)
	if err != nil {
		return err
	}
	o := resizeOutput{RequestID: events.DeriveResizeID(id, ref), Request: f.req}
	e.SetExtension(events.ExtUpgradeID, o.RequestID)
	if _, err := s.Publish(ctx, e); err != nil {
		return err
	}
	table := f.output == "table"
	if table {
		fmt.Fprintf(out, "resize %s: %s containers %s to %s\n", o.RequestID, ref, strings.Join(f.req.Containers, ","), asked(f.req))
	}
	if f.wait {
		err = followResize(ctx, cmd, s, &o, start, f.timeout, table)
	}
	if !table {
		if _, werr := writeStructured(out, f.output, o); werr != nil {
			return werr
		}
	}
	return err
}

// asked is "cpu 500m, memory 256Mi".
func asked(d events.ResizeRequestData) string {
	var parts []string
	if d.CPU != "" {
		parts = append(parts, "cpu "+d.CPU)
	}
	if d.Memory != "" {
		parts = append(parts, "memory "+d.Memory)
	}
	return strings.Join(parts, ", ")
}

// followResize prints the request's events (table) until its result, which
// it keeps in o.
func followResize(ctx context.Context, cmd *cobra.Command, s *history.Stream, o *resizeOutput, since time.Time, timeout time.Duration, table bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var failed error
	q := history.Query{Filter: history.Filter{UpgradeID: o.RequestID, DeadLetters: true}, Since: since, Follow: true}
	err := s.Read(ctx, q, func(r history.Record) error {
		if table {
			fmt.Fprintln(cmd.OutOrStdout(), history.Line(r, time.Local))
		}
		switch typ := r.Event.Type(); {
		case r.Dead != nil && typ == events.ContainerResizeRequested:
			failed = fmt.Errorf("resize %s refused: %s", o.RequestID, r.Dead.Reason)
			return errFinished
		case typ == events.ContainerResizeSucceeded, typ == events.ContainerResizeFailed:
			d, _ := events.As[events.ResizeResultData](r.Event)
			o.Result, o.Type = &d, typ
			if typ == events.ContainerResizeFailed {
				failed = fmt.Errorf("resize %s failed: %s: %s", o.RequestID, d.Reason, d.Message)
			}
			return errFinished
		}
		return nil
	})
	switch {
	case errors.Is(err, errFinished):
		return failed
	case ctx.Err() != nil:
		return fmt.Errorf("stopped waiting after %s; the resize goes on (inplace status)", timeout)
	}
	return err
}
