package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Each controller's own rounding: a Deployment's percentage rounds down,
// a StatefulSet's and a DaemonSet's up; never below 1 (in place cannot
// surge); no bound for Recreate, OnDelete and other objects.
func TestRollingUpdateOf(t *testing.T) {
	half, zero := intstr.FromString("50%"), intstr.FromInt32(0)
	for _, tc := range []struct {
		name     string
		obj      any
		replicas int
		want     int // 0: no bound
	}{
		{"deployment 50% of 5 rounds down", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{
			Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &half}}}}, 5, 2},
		{"deployment surge only", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{
			Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero}}}}, 5, 1},
		{"deployment recreate", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{
			Type: appsv1.RecreateDeploymentStrategyType}}}, 5, 0},
		{"statefulset 50% of 5 rounds up", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &half}}}}, 5, 3},
		{"statefulset on delete", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			Type: appsv1.OnDeleteStatefulSetStrategyType}}}, 5, 0},
		{"daemonset 50% of 5 rounds up", &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
			Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &half}}}}, 5, 3},
		{"replicaset", &appsv1.ReplicaSet{}, 5, 0},
		{"pod", &corev1.Pod{}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ru := RollingUpdateOf(tc.obj)
			got := 0
			if ru != nil {
				got = ru.Resolve(tc.replicas)
			}
			if got != tc.want {
				t.Errorf("bound %d; want %d (%+v)", got, tc.want, ru)
			}
		})
	}
}
