package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/kube"
)

func newPlanCmd() *cobra.Command {
	var k kubeFlags
	var output string
	cmd := &cobra.Command{
		Use:   "plan [KIND/NAME] --image REPO:TAG[@DIGEST]",
		Short: "Show what a push would upgrade, in what waves, and why other workloads are skipped",
		Long: `plan runs compute-spec's own discovery, policy and wave logic on the cluster as
it is now, for an image that was (or might be) pushed, and writes nothing.
Without @DIGEST the push is taken as its tag alone.

With KIND/NAME (deploy/web, sts/db, ...) plan shows what 'inplace upgrade'
of that workload would do, reading only it and its pods. Without, a push
concerns every namespace, so plan shows them all unless -n names one.`,
		Example: `  inplace plan --image registry.example/shop/web:1.5.0
  inplace plan deploy/web -n shop --image registry.example/shop/web:1.5.0 -o yaml`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeWorkload,
	}
	checkOutput := outputFlag(cmd.Flags(), &output, "table", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(); err != nil {
			return err
		}
		image, _ := cmd.Flags().GetString("image")
		push, err := pushOf(image)
		if err != nil {
			return err
		}
		plans, err := planFor(cmd.Context(), &k, push, args)
		if err != nil {
			return err
		}
		if ok, err := writeStructured(cmd.OutOrStdout(), output, plans); ok {
			return err
		}
		printPlans(cmd.OutOrStdout(), push, plans)
		return nil
	}
	cmd.Flags().String("image", "", "the pushed image, REPO:TAG or REPO:TAG@sha256:…")
	_ = cmd.MarkFlagRequired("image")
	k.bind(cmd.Flags(), "namespace of KIND/NAME (default: the kubeconfig context's); without KIND/NAME only the workloads of this namespace (default: every namespace)")
	completeOutput(cmd, "table", "json", "yaml")
	return cmd
}

// planFor is the dry run of push for the workload args names, or for every
// workload of -n (every namespace without -n).
func planFor(ctx context.Context, k *kubeFlags, image events.ImagePushedData, args []string) ([]workloadPlan, error) {
	s, err := k.session()
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.reads(ctx)
	defer cancel()
	ns, explicit, err := k.namespace()
	if err != nil {
		return nil, err
	}
	push := events.UpgradeRequestData{ImagePushedData: image}
	if len(args) == 1 {
		ref, err := s.workload(ctx, args[0])
		if err != nil {
			return nil, err
		}
		push.Target = &ref
	} else if !explicit {
		ns = ""
	}
	snap, plans, err := dryRun(ctx, s, ns, push)
	if err != nil {
		return nil, err
	}
	return withAnalysis(ctx, s, snap, plans)
}

// pushOf reads REPO:TAG[@DIGEST] as the image of an image.pushed or an
// upgrade.requested.
func pushOf(image string) (events.ImagePushedData, error) {
	r, err := imageref.Parse(image)
	if err != nil {
		return events.ImagePushedData{}, fmt.Errorf("--image: %w", err)
	}
	if r.Tag == "" && r.Digest == "" {
		return events.ImagePushedData{}, fmt.Errorf("--image %q: name a tag or a digest", image)
	}
	return events.ImagePushedData{Registry: r.Registry, Repository: r.Repository, Tag: r.Tag, Digest: r.Digest,
		PushedAt: time.Now().UTC(), Origin: "manual"}, nil
}

// loadDefaults reads the config-inplace ConfigMap once (defaults when absent).
func loadDefaults(ctx context.Context, s *kubeSession, namespace string) (config.Defaults, error) {
	cm, err := s.client.CoreV1().ConfigMaps(namespace).Get(ctx, config.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		if isNotFound(err) {
			return config.StandardDefaults(), nil
		}
		return config.Defaults{}, fmt.Errorf("read %s/%s: %w", namespace, config.ConfigMapName, s.reach(err))
	}
	return config.ParseDefaults(cm.Data)
}

// dryRun answers what a push would do, with compute-spec's own logic, from
// reads made within ctx: the workload the push targets and its pods, or
// else every pod and workload of ns ("" for every namespace).
func dryRun(ctx context.Context, s *kubeSession, ns string, push events.UpgradeRequestData) (*kube.Snapshot, []computespec.WorkloadPlan, error) {
	var snap *kube.Snapshot
	var err error
	if push.Target != nil {
		snap, err = s.snapshot(ctx, *push.Target)
	} else {
		snap, err = s.namespaceSnapshot(ctx, ns)
	}
	if err != nil {
		return nil, nil, err
	}
	defaults, err := loadDefaults(ctx, s, s.flags.configNamespace)
	if err != nil {
		return nil, nil, err
	}
	plans, err := computespec.DryRun(snap, defaults, push)
	return snap, plans, err
}
