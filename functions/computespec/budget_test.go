package computespec_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
)

// Without inplace.dev/max-unavailable, a workload's budget is its own
// rolling-update maxUnavailable, resolved as its controller resolves it
// (a Deployment's percentage rounds down, a StatefulSet's and a
// DaemonSet's up); config-inplace's max-unavailable is left for the
// workloads that have none (a DaemonSet with maxUnavailable 2 is upgraded
// two pods at a time, not one).
func TestBudgetFollowsTheWorkloadsOwnStrategy(t *testing.T) {
	e := newEnv(t)
	ref, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	two, half := intstr.FromInt32(2), intstr.FromString("50%")
	nodes := len(e.W.NodeNames())
	opt := map[string]string{"inplace.dev/policy": "semver:minor"}
	withAnn := map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}
	for _, tc := range []struct {
		s        controllertest.Spec
		want     int
		wantFrom string
	}{
		{controllertest.Spec{Name: "deploy-half", Replicas: 4, Annotations: opt, Edit: func(o any) {
			o.(*appsv1.Deployment).Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &half}
		}}, 2, "spec.strategy.rollingUpdate.maxUnavailable: 50%"},
		{controllertest.Spec{Name: "deploy-default", Replicas: 8, Annotations: opt}, 2, "spec.strategy.rollingUpdate.maxUnavailable: 25%"},
		{controllertest.Spec{Name: "deploy-annotated", Replicas: 4, Annotations: withAnn, Edit: func(o any) {
			o.(*appsv1.Deployment).Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &half}
		}}, 1, "inplace.dev/max-unavailable: 1"},
		{controllertest.Spec{Name: "deploy-recreate", Replicas: 4, Annotations: opt, Edit: func(o any) {
			o.(*appsv1.Deployment).Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}}, 1, "config-inplace max-unavailable: 1"},
		{controllertest.Spec{Kind: "DaemonSet", Name: "ds-two", Annotations: opt, Edit: func(o any) {
			o.(*appsv1.DaemonSet).Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &two}
		}}, min(2, nodes), "spec.updateStrategy.rollingUpdate.maxUnavailable: 2"},
		{controllertest.Spec{Kind: "StatefulSet", Name: "sts-default", Replicas: 3, Annotations: opt}, 1,
			"spec.updateStrategy.rollingUpdate.maxUnavailable unset: 1"},
	} {
		tc.s.Containers = []corev1.Container{controllertest.Container("app", ref)}
		e.Create(tc.s)
		kind := tc.s.Kind
		if kind == "" {
			kind = "Deployment"
		}
		target := events.ObjectRef{Kind: kind, Namespace: e.NS, Name: tc.s.Name}
		push := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: e.W.Registry.Host(),
			Repository: e.NS + "/web", Tag: "1.3.0", Digest: d13, Origin: "test"}, Target: &target}
		plans, err := computespec.DryRun(e.Cache, config.StandardDefaults(), push)
		if err != nil || len(plans) != 1 {
			t.Fatalf("%s: %d plans, %v", tc.s.Name, len(plans), err)
		}
		got := plans[0]
		if got.Budget != tc.want || got.BudgetFrom != tc.wantFrom {
			t.Errorf("%s: budget %d (%s); want %d (%s)", tc.s.Name, got.Budget, got.BudgetFrom, tc.want, tc.wantFrom)
		}
		if len(got.Waves) > 0 && len(got.Waves[0]) != tc.want {
			t.Errorf("%s: first wave of %d pods; want %d", tc.s.Name, len(got.Waves[0]), tc.want)
		}
	}
}
