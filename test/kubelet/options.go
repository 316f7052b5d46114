package kubelet

import (
	"io"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Timings say how long the simulated node takes for what a real node does.
// Defaults are fast (tens of milliseconds) for tests; benchmarks set
// realistic values (a pull of ~1s + 50ms/MB, start 2s, stop 1s).
type Timings struct {
	// PullFixed is the fixed cost of a pull (manifest round trips); a pull
	// of an image whose layers the node already has costs only this.
	PullFixed time.Duration
	// PullPerMB is added per MiB of the image's size (from the resolver).
	PullPerMB time.Duration
	// Start is the time from a container's start to its being ready.
	Start time.Duration
	// Stop is how long killing a running container takes (bounded by the
	// pod's grace period when the pod is deleted).
	Stop time.Duration
	// Run is how long a container that runs to completion (init
	// containers, containers of restartPolicy Never/OnFailure pods) runs.
	Run time.Duration
	// CrashAfter is how long a container of a crashing image runs before
	// it exits with an error.
	CrashAfter time.Duration
	// BackoffInitial and BackoffMax bound the crash-loop and image-pull
	// back-off (doubling), like the kubelet's 10s and 5m.
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	// Heartbeat is the node Lease renewal period; node status is rewritten
	// every 4 heartbeats, and at once when the node's images change.
	Heartbeat time.Duration
	// SerialPulls makes a node pull one image at a time, like the
	// kubelet's default serializeImagePulls=true.
	SerialPulls bool
}

// FastTimings are the defaults: quick enough for tests, slow enough that
// every intermediate state is written at least once.
func FastTimings() Timings {
	return Timings{
		PullFixed:      20 * time.Millisecond,
		PullPerMB:      2 * time.Millisecond,
		Start:          30 * time.Millisecond,
		Stop:           20 * time.Millisecond,
		Run:            50 * time.Millisecond,
		CrashAfter:     50 * time.Millisecond,
		BackoffInitial: 200 * time.Millisecond,
		BackoffMax:     2 * time.Second,
		Heartbeat:      2 * time.Second,
		SerialPulls:    true,
	}
}

// RealisticTimings resemble a node on a decent network pulling from a
// nearby registry, with the kubelet's default back-off.
func RealisticTimings() Timings {
	return Timings{
		PullFixed:      800 * time.Millisecond,
		PullPerMB:      40 * time.Millisecond,
		Start:          2 * time.Second,
		Stop:           time.Second,
		Run:            2 * time.Second,
		CrashAfter:     time.Second,
		BackoffInitial: 10 * time.Second,
		BackoffMax:     5 * time.Minute,
		Heartbeat:      10 * time.Second,
		SerialPulls:    true,
	}
}

// Options configure a set of simulated nodes.
type Options struct {
	// Nodes is how many nodes to register; default 3.
	Nodes int
	// NamePrefix names the nodes <prefix>-0, <prefix>-1, ...; default
	// "node". It also labels them (PoolLabel) so that two Kubelets can
	// share a cluster.
	NamePrefix string
	// Resolver pulls images; required.
	Resolver ImageResolver
	// Timings default to FastTimings.
	Timings *Timings
	// SchedulerName is the spec.schedulerName whose pods this Kubelet
	// binds; default "default-scheduler". Give a second Kubelet in the
	// same cluster its own name, or no scheduler (DisableScheduler).
	SchedulerName    string
	DisableScheduler bool
	// PodCIDR is a /16 from which node i gets the /24 number i; default
	// 10.244.0.0/16. Node i's InternalIP is 172.18.<second octet>.<i+2>.
	PodCIDR string
	// Capacity of each node; defaults cpu 32, memory 128Gi, pods 110,
	// ephemeral-storage 500Gi.
	Capacity map[string]resource.Quantity
	// NodeLabels are added to every node's labels.
	NodeLabels map[string]string
	// Workers sync pods in parallel (a pod is never synced by two at
	// once); default 4.
	Workers int
	// KeepNodes leaves the Node objects behind when Run returns; by
	// default they are deleted so that the node-lifecycle controller does
	// not evict pods from dead nodes of a shared cluster.
	KeepNodes bool
	// Logger defaults to discarding.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.NamePrefix == "" {
		o.NamePrefix = "node"
	}
	if o.Timings == nil {
		t := FastTimings()
		o.Timings = &t
	}
	if o.SchedulerName == "" {
		o.SchedulerName = "default-scheduler"
	}
	if o.PodCIDR == "" {
		o.PodCIDR = "10.244.0.0/16"
	}
	if o.Workers == 0 {
		o.Workers = 4
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o.Capacity = withDefaultCapacity(o.Capacity)
	return o
}

func withDefaultCapacity(c map[string]resource.Quantity) map[string]resource.Quantity {
	out := map[string]resource.Quantity{
		"cpu":               resource.MustParse("32"),
		"memory":            resource.MustParse("128Gi"),
		"pods":              resource.MustParse("110"),
		"ephemeral-storage": resource.MustParse("500Gi"),
	}
	for k, v := range c {
		out[k] = v
	}
	return out
}
