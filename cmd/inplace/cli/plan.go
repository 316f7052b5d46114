package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/imageref"
	"github.com/inplace-dev/inplace/pkg/kube"
)

func newPlanCmd() *cobra.Command {
	var k kubeFlags
	var output string
	cmd := &cobra.Command{
		Use:   "plan --image REPO:TAG[@DIGEST]",
		Short: "Show what a push would upgrade, in what waves, and why other workloads are skipped",
		Long: `plan runs compute-spec's own discovery, policy and wave logic on the cluster as
it is now, for an image that was (or might be) pushed, and writes nothing.
Without @DIGEST the push is taken as its tag alone.

A push concerns every namespace, so plan shows them all unless -n names one.`,
		Example: `  inplace plan --image registry.example/shop/web:1.5.0
  inplace plan --image registry.example/shop/web:1.5.0 -n shop -o yaml`,
		Args: cobra.NoArgs,
	}
	checkOutput := outputFlag(cmd.Flags(), &output, "table", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(); err != nil {
			return err
		}
		image, _ := cmd.Flags().GetString("image")
		push, err := pushOf(image)
		if err != nil {
			return err
		}
		plans, err := dryRun(cmd, k, push)
		if err != nil {
			return err
		}
		plans = inNamespace(plans, k.namespace)
		if plans == nil {
			plans = []computespec.WorkloadPlan{}
		}
		if ok, err := writeStructured(cmd.OutOrStdout(), output, plans); ok {
			return err
		}
		printPlans(cmd.OutOrStdout(), push, plans)
		return nil
	}
	cmd.Flags().String("image", "", "the pushed image, REPO:TAG or REPO:TAG@sha256:…")
	_ = cmd.MarkFlagRequired("image")
	k.bind(cmd.Flags(), "only the workloads of this namespace (default: every namespace)")
	completeOutput(cmd, "table", "json", "yaml")
	return cmd
}

// inNamespace keeps the plans of workloads in ns (all when ns is empty).
func inNamespace(plans []computespec.WorkloadPlan, ns string) []computespec.WorkloadPlan {
	if ns == "" {
		return plans
	}
	var out []computespec.WorkloadPlan
	for _, p := range plans {
		if p.Workload.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// pushOf reads REPO:TAG[@DIGEST] as the data of an image.pushed.
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

func printPlans(w io.Writer, push events.ImagePushedData, plans []computespec.WorkloadPlan) {
	if len(plans) == 0 {
		fmt.Fprintf(w, "no workload runs %s: nothing would change\n", push.Name())
		return
	}
	for _, p := range plans {
		fmt.Fprintf(w, "%s\n", p.Workload)
		if p.Skip != "" {
			fmt.Fprintf(w, "  skipped: %s\n", p.Skip)
		}
		if len(p.Waves) > 0 {
			fmt.Fprintf(w, "  max-unavailable %d (%s), %d wave(s):\n", p.Budget, p.BudgetFrom, len(p.Waves))
		}
		for i, wave := range p.Waves {
			var pods []string
			for _, pod := range wave {
				var cs []string
				for _, c := range pod.Containers {
					cs = append(cs, c.Name+" "+c.FromImage+" → "+c.ToImage)
				}
				pods = append(pods, fmt.Sprintf("%s on %s (%s)", pod.Name, pod.Node, strings.Join(cs, ", ")))
			}
			fmt.Fprintf(w, "    wave %d: %s\n", i+1, strings.Join(pods, "\n            "))
		}
		for _, pod := range p.Current {
			fmt.Fprintf(w, "  unchanged %s: %s\n", pod.Name, pod.Reason)
		}
	}
}

// loadDefaults reads the config-inplace ConfigMap once (defaults when absent).
func loadDefaults(cmd *cobra.Command, client kubeClient, namespace string) (config.Defaults, error) {
	cm, err := client.CoreV1().ConfigMaps(namespace).Get(cmd.Context(), config.ConfigMapName, getOptions)
	if err != nil {
		if isNotFound(err) {
			return config.StandardDefaults(), nil
		}
		return config.Defaults{}, fmt.Errorf("read %s/%s: %w", namespace, config.ConfigMapName, err)
	}
	return config.ParseDefaults(cm.Data)
}

// dryRun reads the cluster (informers, config-inplace) and answers what a
// push would do, with compute-spec's own logic.
func dryRun(cmd *cobra.Command, k kubeFlags, push events.ImagePushedData) ([]computespec.WorkloadPlan, error) {
	cfg, err := kube.CLIConfig(k.kubeconfig)
	if err != nil {
		return nil, err
	}
	client, err := kube.Client(cfg)
	if err != nil {
		return nil, err
	}
	cache, err := kube.NewCache(client, 0)
	if err != nil {
		return nil, err
	}
	if err := cache.Start(cmd.Context()); err != nil {
		return nil, err
	}
	defaults, err := loadDefaults(cmd, client, k.configNamespace)
	if err != nil {
		return nil, err
	}
	return computespec.DryRun(cache, defaults, push)
}
