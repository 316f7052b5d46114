package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
)

// FleetTrace is one push through the fleet: its status from the hub's
// record and every rollout outcome the members reported for it on the
// hub's FLEET stream, in time order.
type FleetTrace struct {
	Status  fleet.Status  `json:"status"`
	Reports []FleetReport `json:"reports"`
}

// FleetReport is one member's report of a rollout of the push.
type FleetReport struct {
	Cluster   string        `json:"cluster"`
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Time      time.Time     `json:"time"`
	Workload  string        `json:"workload"`
	UpgradeID string        `json:"upgradeID"`
	Counts    events.Counts `json:"counts"`
	Reason    string        `json:"reason,omitempty"`
	Message   string        `json:"message,omitempty"`
	Seq       uint64        `json:"seq"`
}

// runFleetTrace traces push (the newest when empty) from the hub.
func runFleetTrace(cmd *cobra.Command, o *traceOptions, push string) error {
	return withFleet(cmd.Context(), &o.conn, "trace --fleet", o.fleetBucket, push, func(js jetstream.JetStream, r *fleet.Record) error {
		t := FleetTrace{Status: fleet.Summarize(r), Reports: []FleetReport{}}
		var err error
		if t.Reports, err = fleetReports(cmd.Context(), js, t.Status); err != nil {
			return fmt.Errorf("trace --fleet: %w", err)
		}
		if o.output == "json" || o.output == "yaml" {
			_, err := writeStructured(cmd.OutOrStdout(), o.output, t)
			return err
		}
		return writeFleetTrace(cmd.OutOrStdout(), r, t)
	})
}

// fleetReports reads the hub's FLEET stream for the reports of the
// upgrades of s (those its record names).
func fleetReports(ctx context.Context, js jetstream.JetStream, s fleet.Status) ([]FleetReport, error) {
	ids := map[string]bool{}
	for _, st := range s.Stages {
		for _, c := range st.Clusters {
			for _, r := range c.Rollouts {
				ids[r.UpgradeID] = true
			}
		}
	}
	stream, err := js.Stream(ctx, fleetnet.HubStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return []FleetReport{}, nil
	} else if err != nil {
		return nil, fmt.Errorf("stream %s: %w", fleetnet.HubStream, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", fleetnet.HubStream, err)
	}
	out := []FleetReport{}
	if info.State.Msgs == 0 {
		return out, nil
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{fleetnet.AllRollouts}})
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", fleetnet.HubStream, err)
	}
	for seq := uint64(0); seq < info.State.LastSeq; {
		m, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, context.DeadlineExceeded) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("stream %s: %w", fleetnet.HubStream, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return nil, err
		}
		seq = meta.Sequence.Stream
		if rep, ok := fleetReport(ctx, m, ids); ok {
			rep.Seq = seq
			out = append(out, rep)
		}
	}
	slices.SortStableFunc(out, func(a, b FleetReport) int { return a.Time.Compare(b.Time) })
	return out, nil
}

// fleetReport is m as a report of one of the upgrades ids; a message that
// is no rollout outcome of them is skipped.
func fleetReport(ctx context.Context, m jetstream.Msg, ids map[string]bool) (FleetReport, bool) {
	e, err := bus.Decode(ctx, m.Subject(), m.Headers(), m.Data())
	if err != nil {
		return FleetReport{}, false
	}
	d, err := events.As[events.RolloutData](e)
	if err != nil || !ids[d.UpgradeID] {
		return FleetReport{}, false
	}
	return FleetReport{Cluster: fleetctl.ReportCluster(m.Subject()), Type: events.Short(e.Type()), ID: e.ID(), Time: e.Time(),
		Workload: d.Workload.String(), UpgradeID: d.UpgradeID, Counts: d.Counts, Reason: d.Reason, Message: d.Message}, true
}

// writeFleetTrace writes the push's heading, then what happened in time
// order (started, released, sent, approved, reported, halted), then the
// clusters not reported yet.
func writeFleetTrace(w io.Writer, r *fleet.Record, t FleetTrace) error {
	type step struct {
		at                          time.Time
		stage, cluster, what, extra string
	}
	steps := []step{{at: r.StartedAt, what: "started", extra: r.Target}}
	stageOf := func(cluster string) string {
		if i := r.Policy.StageOf(cluster); i >= 0 {
			return r.Policy.Stages[i].Name
		}
		return ""
	}
	for _, s := range r.Policy.Stages {
		if g, ok := r.Approved[s.Name]; ok {
			steps = append(steps, step{g.At, s.Name, "", "approval " + g.Verdict, g.By})
		}
		if at, ok := r.Released[s.Name]; ok {
			steps = append(steps, step{at: at, stage: s.Name, what: "released"})
		}
		if g, ok := r.Analysis[s.Name]; ok {
			steps = append(steps, step{g.At, s.Name, "", "analysis " + g.Verdict, g.By})
		}
		for _, c := range s.Clusters {
			if at, ok := r.Sent[c]; ok {
				steps = append(steps, step{at: at, stage: s.Name, cluster: c, what: "sent"})
			}
		}
	}
	for _, rep := range t.Reports {
		steps = append(steps, step{rep.Time, stageOf(rep.Cluster), rep.Cluster, rep.Type,
			fmt.Sprintf("%s %s %d/%d succeeded %s %s", rep.Workload, rep.UpgradeID, rep.Counts.Succeeded, rep.Counts.Pods, rep.Reason, rep.Message)})
	}
	if h := t.Status.Halt; h != nil {
		steps = append(steps, step{h.At, h.Stage, h.Cluster, "halted", h.Reason + ": " + h.Message})
	}
	// A step of no known time (a halt found but not recorded yet) comes last.
	slices.SortStableFunc(steps, func(a, b step) int {
		if a.at.IsZero() != b.at.IsZero() {
			return map[bool]int{true: 1, false: -1}[a.at.IsZero()]
		}
		return a.at.Compare(b.at)
	})
	if _, err := fmt.Fprintf(w, "push %s  %s\n", t.Status.Push, t.Status.Target); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSINCE\tSTAGE\tCLUSTER\tWHAT\tDETAIL")
	for _, s := range steps {
		at, since := "-", "-"
		if !s.at.IsZero() {
			at, since = s.at.Local().Format("15:04:05.000"), "+"+s.at.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", at, since, s.stage, s.cluster, s.what, strings.TrimSpace(s.extra))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nstage by stage: inplace status --fleet "+t.Status.Push+"; one cluster's pods: inplace trace UPGRADE on that cluster's NATS")
	return err
}
