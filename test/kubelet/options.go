package kubelet

import (
	"io"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Timings say how long the simulated node takes for what a real node does,
// and how often its kubelet looks: the runtime's times (pull, start, stop,
// run, crash) are shared with hollow nodes (test/hollow passes them to the
// fake runtime); the kubelet's own periods (relist, requeue, back-off,
// image list) are what the real kubelet hard-codes, 10-100x shorter in
// FastTimings.
type Timings struct {
	// PullFixed is the fixed cost of a pull (manifest round trips; a pull
	// that fails costs this); a pull of an image whose layers the node
	// already has costs only this.
	PullFixed time.Duration
	// PullPerMB is added per MiB of the image's size (from the resolver).
	PullPerMB time.Duration
	// Sandbox is how long creating a pod's sandbox takes, its network
	// (CNI) set up included (CRI RunPodSandbox); charged once per sandbox,
	// so to every new pod and never to an in-place restart.
	Sandbox time.Duration
	// VolumeAttach is how long the volumes of a pod that mounts a
	// PersistentVolumeClaim take to be attached to the node and mounted
	// (the attach-detach controller's ControllerPublish, then the
	// kubelet's WaitForAttachAndMount); the pod's first sync waits for it
	// before the sandbox. Charged once per pod, whatever the volume's
	// plugin (the test world runs no CSI driver).
	VolumeAttach time.Duration
	// Start is how long the runtime takes to start a created container
	// (CRI StartContainer); it is running, and ready without a readiness
	// probe, once started.
	Start time.Duration
	// Stop is how long killing a running container takes (bounded by the
	// pod's grace period).
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
	// RelistPeriod is the pod lifecycle event generator's period (the
	// kubelet's 1s relist): a sync sees the runtime as of the last relist
	// after the previous sync ended, and a container that started or
	// exited wakes its pod's worker at the next relist.
	RelistPeriod time.Duration
	// ErrorRequeue is how soon a pod worker whose sync failed (a pull
	// error) syncs again, plus up to 50% jitter (the kubelet's 10s).
	ErrorRequeue time.Duration
	// ImageListPeriod is how often the node refreshes its list of images
	// (the kubelet's 30s image cache); node.status.images shows a pulled
	// image only after the next refresh.
	ImageListPeriod time.Duration
	// Heartbeat is the node Lease renewal period; node status is rewritten
	// every 4 heartbeats, and when the image list changes.
	Heartbeat time.Duration
	// SerialPulls makes a node pull one image at a time, like the
	// kubelet's default serializeImagePulls=true.
	SerialPulls bool
}

// FastTimings are the defaults: every period of the kubelet 10x shorter
// or more, quick enough for tests, with the order of what the kubelet
// does unchanged (a back-off outlasts a relist).
func FastTimings() Timings {
	return Timings{
		PullFixed:       20 * time.Millisecond,
		PullPerMB:       2 * time.Millisecond,
		Start:           30 * time.Millisecond,
		Stop:            20 * time.Millisecond,
		Run:             50 * time.Millisecond,
		CrashAfter:      50 * time.Millisecond,
		BackoffInitial:  200 * time.Millisecond,
		BackoffMax:      2 * time.Second,
		RelistPeriod:    100 * time.Millisecond,
		ErrorRequeue:    200 * time.Millisecond,
		ImageListPeriod: 200 * time.Millisecond,
		Heartbeat:       2 * time.Second,
		SerialPulls:     true,
	}
}

// RealisticTimings resemble a node on a decent network pulling from a
// nearby registry, with the kubelet's own periods and back-off: pulls at
// 25 MiB/s, a sandbox with its network in 1.5 s, a PVC-backed pod's
// volume attached and mounted in 15 s (the sources are in test/bench).
func RealisticTimings() Timings {
	return Timings{
		PullFixed:       800 * time.Millisecond,
		PullPerMB:       40 * time.Millisecond,
		Sandbox:         1500 * time.Millisecond,
		VolumeAttach:    15 * time.Second,
		Start:           2 * time.Second,
		Stop:            time.Second,
		Run:             2 * time.Second,
		CrashAfter:      time.Second,
		BackoffInitial:  10 * time.Second,
		BackoffMax:      5 * time.Minute,
		RelistPeriod:    time.Second,
		ErrorRequeue:    10 * time.Second,
		ImageListPeriod: 30 * time.Second,
		Heartbeat:       10 * time.Second,
		SerialPulls:     true,
	}
}

// withDefaults fills the kubelet's own periods a Timings leaves zero (one
// written before they existed) from FastTimings.
func (t Timings) withDefaults() Timings {
	f := FastTimings()
	for _, d := range []struct{ v, def *time.Duration }{
		{&t.RelistPeriod, &f.RelistPeriod}, {&t.ErrorRequeue, &f.ErrorRequeue},
		{&t.ImageListPeriod, &f.ImageListPeriod}, {&t.Heartbeat, &f.Heartbeat},
	} {
		if *d.v <= 0 {
			*d.v = *d.def
		}
	}
	return t
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
