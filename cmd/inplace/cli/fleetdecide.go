package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/pkg/bus"
	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
)

type fleetDecideFlags struct {
	nats   natsFlags
	bucket string
	by     string
}

// newFleetCmd is `inplace fleet`: an approver's decisions on the stages of
// a push through the fleet, on the hub.
func newFleetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Approve or reject a stage of a push through the fleet (on the hub)",
		Long: `fleet decides on a stage of a push whose fleet policy asks for an approval
(approval: true): approve lets the stage start once the stages before it are
done, reject halts the fleet there (ApprovalRejected; no stage after it
starts). The commands connect to the hub's NATS and write the verdict in
the hub's fleet bucket with a compare-and-swap; the hub's controller takes
it from there. inplace status --fleet lists the stages awaiting approval.`,
	}
	cmd.AddCommand(newFleetDecideCmd("approve", fleet.Pass, "Let a stage that waits for approval start"),
		newFleetDecideCmd("reject", fleet.Fail, "Halt the fleet at a stage that waits for approval"))
	return cmd
}

func newFleetDecideCmd(use, verdict, short string) *cobra.Command {
	var f fleetDecideFlags
	cmd := &cobra.Command{
		Use:     use + " PUSH STAGE",
		Short:   short,
		Example: fmt.Sprintf("  inplace status --fleet --nats-url nats://hub:4222\n  inplace fleet %s 3f2a9c... prod --nats-url nats://hub:4222", use),
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFleetDecide(cmd, &f, verdict, args[0], args[1])
		},
	}
	f.nats.bindURL(cmd.Flags())
	cmd.Flags().StringVar(&f.bucket, "fleet-bucket", defaultFleetBucket, "the hub's KV bucket holding the fleet records")
	cmd.Flags().StringVar(&f.by, "by", "", "who decides, recorded with the decision (default: user@host of this machine)")
	return cmd
}

func runFleetDecide(cmd *cobra.Command, f *fleetDecideFlags, verdict, push, stage string) error {
	if f.by == "" {
		f.by = defaultApprover()
	}
	c, err := f.nats.connect()
	if err != nil {
		return err
	}
	defer c.nc.Close()
	cfg := bus.DefaultConfig()
	cfg.KVBucket = f.bucket
	kv, err := bus.BindKV(cmd.Context(), c.nc, cfg)
	if err != nil {
		return err
	}
	err = fleetctl.NewStore(kv).Approval(cmd.Context(), push, stage, fleet.Gate{Verdict: verdict, By: f.by, At: time.Now().UTC()})
	if err != nil {
		return err
	}
	verb := map[string]string{fleet.Pass: "approved", fleet.Fail: "rejected"}[verdict]
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "push %s stage %s: %s by %s (inplace status --fleet %s)\n", push, stage, verb, f.by, push)
	return err
}
