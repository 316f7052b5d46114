package main

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// scenario is one workload, upgraded in place and by the native rolling
// update at the same max-unavailable and at the native defaults (and, for
// those with Floor, by the floor: the kubelet alone, driven by an ideal
// controller).
type scenario struct {
	Name           string  `json:"name"`
	Title          string  `json:"title"`
	Kind           string  `json:"kind"`
	Replicas       int32   `json:"pods"`
	MaxUnavailable int     `json:"maxUnavailable"`
	Cached         bool    `json:"imageCached"`
	Floor          bool    `json:"-"`
	Target         float64 `json:"targetRatio"` // in place at most this times the native rolling update's time
	// Nodes is "real" for a scenario on real nodes (with the traffic
	// probe), empty on the world's default nodes.
	Nodes string `json:"nodes,omitempty"`
	// Mesh: the pod is the app plus a sidecar plus an init container.
	Mesh bool `json:"mesh,omitempty"`
	// TargetDefaults, when set, is the ratio to the native defaults.
	TargetDefaults float64 `json:"targetRatioDefaults,omitempty"`
	// FreshMB, when set, makes every run's new version a new image of this
	// many MiB of random bytes, so that no node has its layers and each run
	// pays the registry's and containerd's real pull.
	FreshMB int64 `json:"freshImageMiB,omitempty"`
}

func scenarios(o options) []scenario {
	d, s := int32(o.deployPods), int32(o.stsPods)
	return []scenario{
		{Name: "deploy-cached", Title: "Deployment, image cached on the nodes", Kind: "Deployment", Replicas: d,
			MaxUnavailable: quarter(d), Cached: true, Floor: true, Target: 0.9},
		{Name: "deploy-uncached", Title: "Deployment, image not on the nodes", Kind: "Deployment", Replicas: d,
			MaxUnavailable: quarter(d), Floor: true, Target: 0.5},
		{Name: "sts-pvc", Title: "StatefulSet with a PVC per pod", Kind: "StatefulSet", Replicas: s,
			MaxUnavailable: max(int(s)/2, 1), Floor: true, Target: 0.25},
	}
}

// quarter is 25% of n, at least 1: the Deployment's default maxUnavailable.
func quarter(n int32) int { return max(int(n)/4, 1) }

// runKind is one way of upgrading a scenario's workload.
type runKind string

const (
	inPlace        runKind = "in place"
	nativeSame     runKind = "native, same max-unavailable"
	nativeDefaults runKind = "native, defaults"
	floorRun       runKind = "floor (kubelet alone)"
)

// kinds lists the runs of a scenario, in the order they are measured.
func (s scenario) kinds() []runKind {
	k := []runKind{inPlace, nativeSame, nativeDefaults}
	if s.Floor {
		k = append(k, floorRun)
	}
	return k
}

// workloadFor is the scenario's workload for one run, in namespace ns,
// from image: every run has the readiness gate and a Service; in place
// opts in at the scenario's max-unavailable; the native run at the same
// max-unavailable sets it (no surge), the defaults run leaves the
// strategy to the API server.
func (s scenario) workloadFor(k runKind, ns, image string) workload {
	w := workload{Kind: s.Kind, Namespace: ns, Name: "app", Image: image, Replicas: s.Replicas, Gate: true}
	switch k {
	case inPlace:
		w.Annotations = map[string]string{"inplace.dev/policy": "semver:minor",
			"inplace.dev/max-unavailable": strconv.Itoa(s.MaxUnavailable)}
	case nativeSame:
		mu, zero := intstr.FromInt(s.MaxUnavailable), intstr.FromInt(0)
		w.MaxUnavailable = &mu
		if s.Kind == "Deployment" {
			w.MaxSurge = &zero
		}
	}
	return w
}

// strategy describes a run's max-unavailable and surge as a table shows it.
func (s scenario) strategy(k runKind) string {
	switch {
	case k == nativeDefaults && s.Kind == "Deployment":
		return fmt.Sprintf("25%% (%d), surge 25%%", quarter(s.Replicas))
	case k == nativeDefaults:
		return "1"
	}
	return strconv.Itoa(s.MaxUnavailable)
}
