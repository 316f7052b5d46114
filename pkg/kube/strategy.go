package kube

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RollingUpdate is how many pods a workload's own controller lets be
// unavailable during its rolling update, and how that controller resolves
// a percentage: the Deployment controller rounds down, the StatefulSet and
// DaemonSet controllers round up.
type RollingUpdate struct {
	MaxUnavailable intstr.IntOrString
	RoundUp        bool
	// Field names where it comes from: "spec.strategy.rollingUpdate.maxUnavailable".
	Field string
	// Default: the field is unset and MaxUnavailable is the controller's default.
	Default bool
}

// String says where the bound comes from and what it is.
func (r RollingUpdate) String() string {
	if r.Default {
		return r.Field + " unset: " + r.MaxUnavailable.String()
	}
	return r.Field + ": " + r.MaxUnavailable.String()
}

// Resolve is the bound for replicas pods, as the workload's controller
// computes it (at least 1: an in-place restart cannot surge, so a
// surge-only rolling update still moves one pod at a time).
func (r RollingUpdate) Resolve(replicas int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&r.MaxUnavailable, replicas, r.RoundUp)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// RollingUpdateOf reads the rolling-update bound of a Deployment,
// StatefulSet or DaemonSet; nil for any other object and for the other
// strategies (Recreate, OnDelete). Unset fields take the controllers'
// defaults: 25% for a Deployment, 1 for a StatefulSet and a DaemonSet (the
// API server drops a StatefulSet's maxUnavailable unless the
// MaxUnavailableStatefulSet feature is on: its controller then moves one
// pod at a time).
func RollingUpdateOf(obj any) *RollingUpdate {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		if o.Spec.Strategy.Type != "" && o.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
			return nil
		}
		ru := &RollingUpdate{MaxUnavailable: intstr.FromString("25%"), Field: "spec.strategy.rollingUpdate.maxUnavailable", Default: true}
		if r := o.Spec.Strategy.RollingUpdate; r != nil && r.MaxUnavailable != nil {
			ru.MaxUnavailable, ru.Default = *r.MaxUnavailable, false
		}
		return ru
	case *appsv1.StatefulSet:
		if o.Spec.UpdateStrategy.Type != "" && o.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
			return nil
		}
		ru := &RollingUpdate{MaxUnavailable: intstr.FromInt32(1), RoundUp: true, Field: "spec.updateStrategy.rollingUpdate.maxUnavailable", Default: true}
		if r := o.Spec.UpdateStrategy.RollingUpdate; r != nil && r.MaxUnavailable != nil {
			ru.MaxUnavailable, ru.Default = *r.MaxUnavailable, false
		}
		return ru
	case *appsv1.DaemonSet:
		if o.Spec.UpdateStrategy.Type != "" && o.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
			return nil
		}
		ru := &RollingUpdate{MaxUnavailable: intstr.FromInt32(1), RoundUp: true, Field: "spec.updateStrategy.rollingUpdate.maxUnavailable", Default: true}
		if r := o.Spec.UpdateStrategy.RollingUpdate; r != nil && r.MaxUnavailable != nil {
			ru.MaxUnavailable, ru.Default = *r.MaxUnavailable, false
		}
		return ru
	}
	return nil
}
