package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
)

// runFleetStatus shows one push through the fleet (push, or the newest
// one when empty) from the hub's fleet bucket: stage by stage, each
// cluster's rollout of each workload.
func runFleetStatus(cmd *cobra.Command, o *statusOptions, push string) error {
	return withFleet(cmd.Context(), &o.conn, "status --fleet", o.fleetBucket, push, func(_ jetstream.JetStream, r *fleet.Record) error {
		s := fleet.Summarize(r)
		if o.output != "table" {
			_, err := writeStructured(cmd.OutOrStdout(), o.output, s)
			return err
		}
		return writeFleetStatus(cmd.OutOrStdout(), s, time.Now())
	})
}

// withFleet connects to the hub's NATS as f says, reads push's record (the
// newest when push is empty) and hands it to use with the connection,
// which it closes once use returns. A read's error is prefixed with what.
func withFleet(ctx context.Context, f *natsFlags, what, bucket, push string, use func(jetstream.JetStream, *fleet.Record) error) error {
	c, err := f.connect()
	if err != nil {
		return err
	}
	defer c.nc.Close()
	r, err := readFleet(ctx, c.js, bucket, push)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return use(c.js, r)
}

// readFleet reads push's record, or the newest record when push is empty.
func readFleet(ctx context.Context, js jetstream.JetStream, bucket, push string) (*fleet.Record, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("fleet bucket %s: %w (is this the hub's NATS?)", bucket, err)
	}
	keys := []string{push}
	if push == "" {
		if keys, err = kv.Keys(ctx); errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, errors.New("no push through the fleet yet")
		} else if err != nil {
			return nil, fmt.Errorf("fleet bucket %s: %w", bucket, err)
		}
	}
	var newest *fleet.Record
	for _, k := range keys {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, fmt.Errorf("push %q: no fleet record", k)
		} else if err != nil {
			return nil, fmt.Errorf("push %q: %w", k, err)
		}
		var r fleet.Record
		if err := json.Unmarshal(e.Value(), &r); err != nil {
			return nil, fmt.Errorf("push %q: %w", k, err)
		}
		if newest == nil || r.StartedAt.After(newest.StartedAt) {
			newest = &r
		}
	}
	return newest, nil
}

// writeFleetStatus writes a heading line for the push, then one row per
// stage, cluster and workload.
func writeFleetStatus(w io.Writer, s fleet.Status, now time.Time) error {
	state := "Running"
	switch {
	case s.Halt != nil:
		state = fmt.Sprintf("Halted in %s: %s", s.Halt.Stage, s.Halt.Reason)
		if s.Halt.Message != "" {
			state += ": " + strings.TrimSpace(s.Halt.Message)
		}
	case s.Done:
		state = "Done"
	}
	if _, err := fmt.Fprintf(w, "push %s  %s  started %s ago  %s\n", s.Push, s.Target,
		now.Sub(s.StartedAt).Round(time.Second), state); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATE\tCLUSTER\tWORKLOAD\tROLLOUT\tUPGRADE\tREASON")
	for _, st := range s.Stages {
		for _, c := range st.Clusters {
			for _, r := range c.Rollouts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, st.State, c.Cluster, r.Workload,
					rolloutState(c, r), r.UpgradeID, strings.TrimSpace(r.Reason+" "+r.Message))
			}
		}
	}
	return tw.Flush()
}

// rolloutState is what a row says of a rollout: its outcome, or whether
// the cluster was sent the push yet.
func rolloutState(c fleet.ClusterReport, r fleet.RolloutReport) string {
	switch {
	case r.State != "":
		return string(r.State)
	case c.SentAt.IsZero():
		return "NotSent"
	}
	return "InFlight"
}

// defaultFleetBucket is the hub's fleet bucket.
const defaultFleetBucket = fleetctl.Bucket
