package main

import (
	"fmt"
	"time"

	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/world"
)

// knob is one figure the simulated node charges, with where it comes from.
type knob struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// profile is how the simulated node behaves in one part of the benchmark.
type profile struct {
	Name    string          `json:"name"`
	Timings kubelet.Timings `json:"-"`
	ImageMB int64           `json:"imageMiB"`
	// Nodes is the node mode of the profile's world; empty: INPLACE_NODES.
	Nodes world.NodeMode `json:"nodes,omitempty"`
	Knobs []knob         `json:"knobs"`
}

// realistic is what recreating a pod costs on a real cluster, each figure
// from a published measurement or stated as an assumption.
func realistic() profile {
	t := kubelet.RealisticTimings()
	const imageMB = 100
	pull := t.PullFixed + time.Duration(imageMB)*t.PullPerMB
	return profile{Name: "realistic", Timings: t, ImageMB: imageMB, Knobs: []knob{
		{"pod sandbox + network (CNI)", t.Sandbox.String(),
			"containerd/containerd#6111: a containerd maintainer measured the default CNI setup at 1.5 s"},
		{"volume attach + mount (PVC)", t.VolumeAttach.String(),
			"kubernetes/kubernetes#62119: AWS EBS attach and mount take about 15 s; the CSI attacher's timeout is 15 s (kubernetes/kubernetes#79528)"},
		{"image pull on a node without it", fmt.Sprintf("%v + %d MiB at %.0f MiB/s = %v", t.PullFixed, imageMB,
			float64(time.Second)/float64(t.PullPerMB), pull),
			"containerd/containerd#8160: about 25 MB/s per layer from a registry; the 100 MiB image and the fixed 0.8 s are assumed"},
		{"image pull on a node with it", t.PullFixed.String() + " (a new tag of a digest the node has) or nothing (the digest itself)",
			"the kubelet's IfNotPresent: containerd resolves the tag, the layers are there"},
		{"container stop", t.Stop.String(), "assumed: the app exits 1 s after SIGTERM (bounded by its 30 s grace period)"},
		{"container start", t.Start.String(), "assumed: the app serves 2 s after it starts (no readiness probe: running is ready)"},
		{"PLEG relist", t.RelistPeriod.String(), "the kubelet's genericPlegRelistPeriod (pkg/kubelet/kubelet.go, v1.35)"},
		{"error requeue, back-off", fmt.Sprintf("%v, %v..%v", t.ErrorRequeue, t.BackoffInitial, t.BackoffMax),
			"the kubelet's backOffPeriod and MaxContainerBackOff (v1.35)"},
		{"node image list refresh", t.ImageListPeriod.String(), "the kubelet's image cache period (v1.35)"},
	}}
}

// zero is a node that takes no time for what it does: the floor under the
// project's own cost at scale.
func zero() profile {
	t := kubelet.FastTimings()
	t.PullFixed, t.PullPerMB, t.Sandbox, t.VolumeAttach, t.Start, t.Stop = 0, 0, 0, 0, 0, 0
	return profile{Name: "zero", Timings: t, ImageMB: 0, Knobs: []knob{
		{"pull, sandbox, attach, start, stop", "0", "zero kubelet delay (the throughput run)"},
		{"PLEG relist", t.RelistPeriod.String(), "10x the kubelet's 1 s, as in the tests"},
	}}
}
