package computespec_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
)

// Without inplace.dev/max-unavailable, a workload's budget is its own
// rolling-update maxUnavailable, resolved as its controller resolves it
// (a Deployment's percentage rounds down, a StatefulSet's and a
// DaemonSet's up); config-inplace's max-unavailable is left for the
// workloads that have none (a DaemonSet with maxUnavailable 2 is upgraded
// two pods at a time, not one).
func TestBudgetFollowsTheWorkloadsOwnStrategy(t *testing.T) {
	e := newEnv(t)
	ref, _ := e.image("web", "1.2.0")
	_, d13 := e.image("web", "1.3.0")
	two, half := intstr.FromInt32(2), intstr.FromString("50%")
	nodes := len(e.w.NodeNames())
	opt := map[string]string{"inplace.dev/policy": "semver:minor"}
	withAnn := map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}
	for _, tc := range []struct {
		s        spec
		want     int
		wantFrom string
	}{
		{spec{name: "deploy-half", replicas: 4, annotations: opt, edit: func(o any) {
			o.(*appsv1.Deployment).Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &half}
		}}, 2, "spec.strategy.rollingUpdate.maxUnavailable: 50%"},
		{spec{name: "deploy-default", replicas: 8, annotations: opt}, 2, "spec.strategy.rollingUpdate.maxUnavailable: 25%"},
		{spec{name: "deploy-annotated", replicas: 4, annotations: withAnn, edit: func(o any) {
			o.(*appsv1.Deployment).Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &half}
		}}, 1, "inplace.dev/max-unavailable: 1"},
		{spec{name: "deploy-recreate", replicas: 4, annotations: opt, edit: func(o any) {
			o.(*appsv1.Deployment).Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}}, 1, "config-inplace max-unavailable: 1"},
		{spec{kind: "DaemonSet", name: "ds-two", annotations: opt, edit: func(o any) {
			o.(*appsv1.DaemonSet).Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &two}
		}}, min(2, nodes), "spec.updateStrategy.rollingUpdate.maxUnavailable: 2"},
		{spec{kind: "StatefulSet", name: "sts-default", replicas: 3, annotations: opt}, 1,
			"spec.updateStrategy.rollingUpdate.maxUnavailable unset: 1"},
	} {
		tc.s.containers = []corev1.Container{container("app", ref)}
		e.create(tc.s)
		kind := tc.s.kind
		if kind == "" {
			kind = "Deployment"
		}
		target := events.ObjectRef{Kind: kind, Namespace: e.ns, Name: tc.s.name}
		push := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: e.w.Registry.Host(),
			Repository: e.ns + "/web", Tag: "1.3.0", Digest: d13, Origin: "test"}, Target: &target}
		plans, err := computespec.DryRun(e.cache, config.StandardDefaults(), push)
		if err != nil || len(plans) != 1 {
			t.Fatalf("%s: %d plans, %v", tc.s.name, len(plans), err)
		}
		got := plans[0]
		if got.Budget != tc.want || got.BudgetFrom != tc.wantFrom {
			t.Errorf("%s: budget %d (%s); want %d (%s)", tc.s.name, got.Budget, got.BudgetFrom, tc.want, tc.wantFrom)
		}
		if len(got.Waves) > 0 && len(got.Waves[0]) != tc.want {
			t.Errorf("%s: first wave of %d pods; want %d", tc.s.name, len(got.Waves[0]), tc.want)
		}
	}
}
