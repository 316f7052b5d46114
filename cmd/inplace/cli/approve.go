package cli

import (
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

type decideFlags struct {
	nats   natsFlags
	bucket string
	by     string
	reason string
}

// newDecideCmds are `inplace approve` and `inplace reject`.
func newDecideCmds() []*cobra.Command {
	return []*cobra.Command{
		newDecideCmd("approve", events.UpgradeApproved, "Let a rollout that waits for approval go on",
			`approve publishes upgrade.approved for a rollout that a policy holds for an
approver (inplace.dev/approval: major or all, or config-inplace's approval).
compute-spec then plans it like any rollout. The decision is checked
against the rollout record: only an upgrade awaiting approval, not expired,
of a workload still opted in and not paused, is approved.

Whoever may publish on the bus subject inplace.upgrade.approved can
approve. The command connects as the approver identity (approver.nk in
--nats-credentials; the operator when the directory has none), which may
publish only upgrade.approved and upgrade.rejected and read the rollout
records: give its seed to the approvers alone (docs/security.md, Approvals).`),
		newDecideCmd("reject", events.UpgradeRejected, "End a rollout that waits for approval",
			`reject publishes upgrade.rejected for a rollout that waits for approval:
compute-spec ends it (phase Rejected) and plans nothing.`),
	}
}

func newDecideCmd(use, typ, short, long string) *cobra.Command {
	var f decideFlags
	cmd := &cobra.Command{
		Use:     use + " UPGRADE",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  inplace status\n  inplace %s u-97fb57aedb1d --reason \"release 2.0 signed off\"", use),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDecide(cmd, &f, typ, args[0])
		},
	}
	f.nats.bind(cmd.Flags())
	f.nats.identity = busauth.Approver
	cmd.Flags().StringVar(&f.bucket, "kv-bucket", bus.DefaultConfig().KVBucket, "KV bucket holding the rollouts")
	cmd.Flags().StringVar(&f.by, "by", "", "who decides, recorded with the decision (default: user@host of this machine)")
	cmd.Flags().StringVar(&f.reason, "reason", "", "why, recorded with the decision")
	return cmd
}

// defaultApprover is user@host.
func defaultApprover() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

func runDecide(cmd *cobra.Command, f *decideFlags, typ, upgradeID string) error {
	ctx := cmd.Context()
	if f.by == "" {
		f.by = defaultApprover()
	}
	c, s, err := f.nats.openStream(ctx)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	rs, err := history.ReadRollouts(ctx, c.js, f.bucket)
	if err != nil {
		return err
	}
	r, err := awaiting(rs, upgradeID)
	if err != nil {
		return err
	}
	d := events.DecisionData{UpgradeID: upgradeID, Workload: r.Workload, By: f.by, Reason: f.reason}
	e, err := events.New(decisionID(upgradeID, typ, time.Now()), typ, events.Source("cli"), r.Workload.String(), d)
	if err != nil {
		return err
	}
	e.SetExtension(events.ExtUpgradeID, upgradeID)
	dup, err := s.Publish(ctx, e)
	if err != nil {
		return err
	}
	verb := map[string]string{events.UpgradeApproved: "approved", events.UpgradeRejected: "rejected"}[typ]
	if dup {
		verb += " already"
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "upgrade %s of %s to %s: %s (inplace trace %s)\n", upgradeID, r.Workload, r.Target(), verb, upgradeID)
	return err
}

// decisionID is the id of a decision made at, each command one of its own:
// one compute-spec dead-lettered (the workload paused meanwhile: "approve
// again once it may move", compute-spec out of reach for longer than its
// budget) is made again by running the command again, and is not dropped
// as a copy of the first while the stream remembers its id. A decision on
// an upgrade decided meanwhile is refused by compute-spec (the record
// tells), and the command refuses it before that while the record shows
// it.
func decisionID(upgradeID, typ string, at time.Time) string {
	return events.DeriveID("decision/"+upgradeID, typ, at.UTC().Format(time.RFC3339Nano))
}

// awaiting finds the rollout of upgradeID awaiting approval.
func awaiting(rs []rollout.Rollout, upgradeID string) (*rollout.Rollout, error) {
	for i := range rs {
		r := &rs[i]
		if r.UpgradeID != upgradeID {
			continue
		}
		if r.Phase != rollout.AwaitingApproval {
			return nil, fmt.Errorf("upgrade %s of %s is %s, not awaiting approval", upgradeID, r.Workload, r.Phase)
		}
		return r, nil
	}
	return nil, fmt.Errorf("no rollout %s (inplace status lists those awaiting approval)", upgradeID)
}
