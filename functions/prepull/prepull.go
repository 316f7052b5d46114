package prepull

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Name is the function's name (its consumer, its ServiceAccount's suffix).
const Name = "pre-pull"

// Skipped reasons of PrepulledData.
const (
	SkipDisabled = "disabled"
	SkipPresent  = "present on node"
	// SkipPulled: a pre-pull pod of this process pulled the images on the
	// node moments ago, before the node lists them (the kubelet refreshes
	// status.images every 30 s or so).
	SkipPulled  = "pulled on node by a pre-pull moments ago"
	SkipRunning = "the pod already runs it"
	// SkipRunsOnNode: a pod bound to the node runs the images (its
	// containers' status imageIDs, from the API server), before or
	// without the node listing them (status.images lists at most 50
	// images and 5 names of each).
	SkipRunsOnNode = "a pod on the node runs it"
	SkipNoNode     = "the plan names no node"
	SkipNodeGone   = "node not found"
	SkipBusy       = "node busy pre-pulling for longer than prepull-timeout"
)

// Outcome reasons of upgrade.failed.
const (
	ReasonPrepullFailed  = "PrepullFailed"
	ReasonPrepullTimeout = "PrepullTimeout"
)

// Deps are what the function needs.
type Deps struct {
	// Client may be least-privileged: see rbac.yaml.
	Client kubernetes.Interface
	// Reader reads the planned pod and its node: the process's informer
	// cache in `inplace run`; nil reads through Client (GETs).
	Reader kube.Reader
	// Config gives the pre-pull namespace, per-node bound and timeout; required.
	Config *config.Store
	Log    *slog.Logger
	// Clock defaults to the real clock.
	Clock clock.PassiveClock
	// Changes wakes a delivery waiting on a node's pre-pull pods (a pull
	// under way, a slot to free) at their next change: `inplace run` feeds
	// it from the pod informer. Nil: it looks again every Recheck.
	Changes Changes
	// Recheck is how soon a pull in progress is looked at again by itself:
	// default 1s, or with Changes 30s (a safety net: the watch wakes it).
	Recheck time.Duration
	// Decoded shares decoded rollout records by revision with the
	// process's other readers (Warm); nil decodes each.
	Decoded *rollout.Decoded
	// Reports are the kubelet's Pulled Events: a pull counts done at its
	// end, not when the pre-pull pod's status shows its container. Nil:
	// the status alone says. Changes should wake a node at its Events too
	// (WatchEvents).
	Reports Reports
	// Running tells whether a pod bound to a node runs an image, by the
	// pod statuses the process's informer holds (kube.Cache.RunsImage):
	// the node then has it, whether its status.images lists it or not.
	// Nil: only status.images and this process's own pulls say.
	Running Running
}

// Changes tells waiters when the pre-pull pods of a node change
// (notify.Keys, keyed by node name).
type Changes interface {
	Changed(node string) (<-chan struct{}, func())
}

// Function is the pre-pull function.
type Function struct {
	d Deps
	// deleted remembers the pre-pull pods this process deleted, by UID,
	// while its cache may still show them: the plans that shared one pod
	// each end it, and only the first deletes it.
	deleted *cache.Expiring
	// pulled remembers the images a pre-pull pod was seen to pull, by node
	// and images key (pulledKey), until the node is sure to list them:
	// the pod is deleted once done, and the next pod planned on that node
	// would otherwise pull again (a sandbox and a tag resolve, ~3 s).
	pulled *cache.Expiring
}

// New returns the function.
func New(d Deps) *Function {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Reader == nil {
		d.Reader = kube.Live{Client: d.Client}
	}
	if d.Recheck <= 0 {
		d.Recheck = time.Second
		if d.Changes != nil {
			d.Recheck = watchedRecheck
		}
	}
	return &Function{d: d, deleted: cache.NewExpiring(), pulled: cache.NewExpiring()}
}

// Name implements runner.Function.
func (f *Function) Name() string { return Name }

// Types implements runner.Function.
func (f *Function) Types() []string { return []string{events.UpgradePlanned} }

// Handle puts plan's images on its node, or says why it need not. While
// the pull is under way (or the node has no free slot) it waits for the
// node's pre-pull pods to change (Changes) and looks again, within the
// delivery's deadline; past it, the bus redelivers after Recheck.
func (f *Function) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	plan, err := events.AsIn[events.Plan](ctx, e)
	if err != nil {
		return nil, err
	}
	for {
		woken, stop := f.changed(plan.Pod.Node)
		outs, err := f.handle(ctx, e, plan)
		if k, _ := settle.Classify(err); k != settle.Later || !notify.Wait(ctx, woken, maxWait) {
			stop()
			return outs, err
		}
		stop()
	}
}

// handle is one look at plan's node.
func (f *Function) handle(ctx context.Context, e cloudevents.Event, plan events.Plan) ([]cloudevents.Event, error) {
	cfg := f.d.Config.Load()
	switch {
	case !plan.Prepull:
		return f.prepulled(e, plan, 0, SkipDisabled)
	case plan.Pod.Node == "":
		return f.prepulled(e, plan, 0, SkipNoNode)
	}
	switch running, err := f.running(ctx, plan); {
	case err != nil:
		return nil, err
	case running:
		return f.prepulled(e, plan, 0, SkipRunning)
	}
	images := targets(plan)
	pods, err := f.ours(ctx, cfg, plan.Pod.Node)
	if err != nil {
		return nil, err
	}
	if p := withImages(pods, imagesKey(images)); p != nil {
		return f.follow(ctx, e, plan, p, cfg)
	}
	node, err := f.d.Reader.Node(ctx, plan.Pod.Node)
	switch {
	case apierrors.IsNotFound(err):
		return f.prepulled(e, plan, 0, SkipNodeGone)
	case err != nil:
		return nil, fmt.Errorf("pre-pull %s: get node %s: %w", plan.Pod, plan.Pod.Node, err)
	case onNode(node.Status.Images, images, pullsAlways(plan)):
		return f.prepulled(e, plan, 0, SkipPresent)
	case f.runningOn(plan.Pod.Node, images):
		return f.prepulled(e, plan, 0, SkipRunsOnNode)
	case f.pulledOn(plan.Pod.Node, images, pullsAlways(plan)):
		return f.prepulled(e, plan, 0, SkipPulled)
	}
	return f.start(ctx, e, plan, node.Status.NodeInfo.Architecture, images, pods, cfg)
}

// running reports whether the planned pod already runs every target
// digest: then the node has the image, whatever its status.images says
// (the kubelet lists a pulled image only some 30s later, so a replay right
// after a rollout would otherwise pre-pull again).
func (f *Function) running(ctx context.Context, plan events.Plan) (bool, error) {
	pod, err := f.d.Reader.Pod(ctx, plan.Pod.Namespace, plan.Pod.Name)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("pre-pull %s: get pod: %w", plan.Pod, err)
	}
	return string(pod.UID) == plan.Pod.UID && runsTargets(pod, plan), nil
}

// start creates the pre-pull pod in a free slot of the node (of
// architecture arch).
func (f *Function) start(ctx context.Context, e cloudevents.Event, plan events.Plan, arch string, images []string,
	pods []corev1.Pod, cfg config.Defaults) ([]cloudevents.Event, error) {
	name, ok := freeSlot(pods, plan.Pod.Node, cfg.PrepullPerNode)
	if !ok {
		switch n, err := f.reclaim(ctx, pods, cfg); {
		case err != nil:
			return nil, err
		case n > 0:
			return nil, settle.NotYet(f.d.Recheck, "node %s: %d ended pre-pulls give their slots back", plan.Pod.Node, n)
		}
		if !plan.PlannedAt.IsZero() && f.d.Clock.Since(plan.PlannedAt) > cfg.PrepullTimeout {
			return f.prepulled(e, plan, 0, SkipBusy)
		}
		return nil, settle.NotYet(f.d.Recheck, "node %s has %d pre-pulls under way", plan.Pod.Node, cfg.PrepullPerNode)
	}
	if err := f.ensureExitFor(ctx, cfg.PrepullNamespace, arch); err != nil {
		return nil, fmt.Errorf("pre-pull %s: %w", plan.Pod, err)
	}
	pod := podFor(cfg.PrepullNamespace, name, plan.Pod.Node, arch, images, f.d.Clock.Now())
	_, err := f.d.Client.CoreV1().Pods(cfg.PrepullNamespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: "inplace-" + Name})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil, settle.NotYet(f.d.Recheck/4, "slot %s was just taken", name)
	case err != nil:
		return nil, fmt.Errorf("pre-pull %s: create pod %s/%s: %w", plan.Pod, cfg.PrepullNamespace, name, err)
	}
	f.d.Log.Info("pre-pull started", "pod", plan.Pod.String(), "node", plan.Pod.Node, "prepullPod", name, "images", images)
	return nil, settle.NotYet(f.d.Recheck, "pre-pull pod %s created", name)
}

// follow reads the pre-pull pod's status and ends it when it is done.
func (f *Function) follow(ctx context.Context, e cloudevents.Event, plan events.Plan, p *corev1.Pod,
	cfg config.Defaults) ([]cloudevents.Event, error) {
	age := f.d.Clock.Since(createdAt(p))
	v, msg := evaluate(p)
	if v == pending && f.reported(ctx, p) {
		v = pulled
	}
	if v == pending && age <= cfg.PrepullTimeout {
		return nil, settle.NotYet(f.d.Recheck, "%s", msg)
	}
	if err := f.delete(ctx, p); err != nil {
		return nil, err
	}
	switch v {
	case pulled:
		f.pulled.Set(pulledKey(p.Spec.NodeName, p.Labels[LabelImages]), true, pulledFor)
		return f.prepulled(e, plan, age.Milliseconds(), "")
	case failed:
		return f.failed(e, plan, ReasonPrepullFailed, msg)
	}
	return f.failed(e, plan, ReasonPrepullTimeout,
		fmt.Sprintf("no pull within %s: %s", cfg.PrepullTimeout, msg))
}

func pullsAlways(plan events.Plan) bool {
	for _, c := range plan.Containers {
		if c.PullPolicy == string(corev1.PullAlways) {
			return true
		}
	}
	return false
}

func (f *Function) prepulled(e cloudevents.Event, plan events.Plan, millis int64, skipped string) ([]cloudevents.Event, error) {
	out, err := inplace.StepEvent(e, plan, events.ImagePrepulled, events.Source(Name),
		events.PrepulledData{Plan: plan, Node: plan.Pod.Node, PullMillis: millis, Skipped: skipped})
	if err != nil {
		return nil, settle.Permanent(err)
	}
	return []cloudevents.Event{out}, nil
}

func (f *Function) failed(e cloudevents.Event, plan events.Plan, reason, msg string) ([]cloudevents.Event, error) {
	f.d.Log.Warn("pre-pull failed", "pod", plan.Pod.String(), "node", plan.Pod.Node, "reason", reason, "message", msg)
	out, err := inplace.StepEvent(e, plan, events.UpgradeFailed, events.Source(Name), events.OutcomeData{
		Plan: plan, Outcome: events.OutcomeFailed, Reason: reason, Message: msg, FinishedAt: f.d.Clock.Now().UTC()})
	if err != nil {
		return nil, settle.Permanent(err)
	}
	return []cloudevents.Event{out}, nil
}

// pulledFor is how long a pull seen done is taken as proof the node has
// the images: several times the kubelet's image list refresh, short of
// what its image garbage collection (disk pressure) would ever reclaim.
const pulledFor = 10 * time.Minute

func pulledKey(node, images string) string { return node + "/" + images }

// pulledOn reports whether a pre-pull pod of this process pulled images on
// node lately. A container pulling Always is never taken as pulled by it.
func (f *Function) pulledOn(node string, images []string, always bool) bool {
	if always {
		return false
	}
	_, ok := f.pulled.Get(pulledKey(node, imagesKey(images)))
	return ok
}
