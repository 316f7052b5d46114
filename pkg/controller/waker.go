package controller

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/inplace"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/pulls"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// wakeKey is what a wake-up re-plans: the rollouts waiting on a node, or
// the rollout of one workload.
type wakeKey struct {
	node     string
	workload events.ObjectRef
}

// Waker runs the rollout controller's wake-ups, the way a controller runs its
// workqueue: the pod and node informers' events add a key (a workload
// whose pod became Ready or left, a node whose pre-pull ended or whose
// status.images changed), repeated adds collapse, and one worker re-plans
// each key from the current state and publishes what it planned. So a
// rollout waiting for a free slot or for its nodes' pulls moves on at the
// change itself, with no timer (the bus's "not yet" redelivery and the
// watchdog stay as safety nets).
type Waker struct {
	ctl     *Rollouts
	owners  func(*corev1.Pod) (kube.Workload, bool, error)
	publish func(context.Context, cloudevents.Event) error
	q       workqueue.TypedRateLimitingInterface[wakeKey]
	log     *slog.Logger
}

// Informers are the informers a Waker watches (kube.Cache with nodes).
type Informers interface {
	PodInformer() cache.SharedIndexInformer
	// NodeInformer is nil when nodes are not watched.
	NodeInformer() cache.SharedIndexInformer
	OwnerOf(pod *corev1.Pod) (kube.Workload, bool, error)
}

// NewWaker registers f's wake-ups on the informers; Run works them,
// publishing what they plan.
func NewWaker(ctl *Rollouts, c Informers, publish func(context.Context, cloudevents.Event) error, log *slog.Logger) (*Waker, error) {
	w := &Waker{ctl: ctl, owners: c.OwnerOf, publish: publish, log: log,
		q: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[wakeKey](),
			workqueue.TypedRateLimitingQueueConfig[wakeKey]{Name: "compute-spec-wake"})}
	if _, err := c.PodInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.podAdded,
		UpdateFunc: func(old, obj any) { w.podChanged(old, obj) },
		DeleteFunc: w.podGone,
	}); err != nil {
		return nil, err
	}
	if n := c.NodeInformer(); n != nil {
		if _, err := n.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: w.nodeChanged,
		}); err != nil {
			return nil, err
		}
	}
	after := func(ref events.ObjectRef, d time.Duration) {
		ref.UID = ""
		w.q.AddAfter(wakeKey{workload: ref}, d)
	}
	ctl.after.Store(&after)
	return w, nil
}

// podChanged: a pre-pull pod stopped pulling, or a pod became Ready.
func (w *Waker) podChanged(old, obj any) {
	o, ok1 := old.(*corev1.Pod)
	p, ok2 := obj.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	if pulls.IsPrepull(p) {
		if pullingPod(o) && !pullingPod(p) {
			w.q.Add(wakeKey{node: p.Spec.NodeName})
		}
		return
	}
	becameReady := !inplace.Ready(o) && inplace.Ready(p)
	if becameReady || running(o) != running(p) {
		w.wakeRequests(p)
	}
	if becameReady {
		w.addOwner(p)
	}
}

// podAdded: a pod the cache did not show, which a request may wait for.
func (w *Waker) podAdded(obj any) {
	if p, ok := obj.(*corev1.Pod); ok && !pulls.IsPrepull(p) {
		w.wakeRequests(p)
	}
}

// wakeRequests wakes the restart and resize requests waiting on the
// record of p's workload (WhenRecordFree) for its containers to run.
func (w *Waker) wakeRequests(p *corev1.Pod) {
	if w.ctl.d.Records == nil {
		return
	}
	if wl, ok, err := w.owners(p); err == nil && ok {
		w.ctl.d.Records.Wake(rollout.Key(wl.Ref))
	}
}

// running is how many of p's containers (sidecars included) run.
func running(p *corev1.Pod) int {
	n := 0
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.State.Running != nil {
				n++
			}
		}
	}
	return n
}

// pullingPod: a pre-pull pod whose pull is under way, which holds the
// pods waiting for its images (HoldPulling).
func pullingPod(p *corev1.Pod) bool {
	v, _ := pulls.Evaluate(p)
	return v == pulls.Pending && p.DeletionTimestamp == nil
}

// podGone: a pod left, and with it maybe an unavailable one; or a
// pre-pull pod left, and with it the pull its node's pods waited for.
func (w *Waker) podGone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	switch {
	case !ok:
	case pulls.IsPrepull(p):
		w.q.Add(wakeKey{node: p.Spec.NodeName})
	default:
		w.addOwner(p)
	}
}

func (w *Waker) addOwner(p *corev1.Pod) {
	if wl, ok, err := w.owners(p); err == nil && ok {
		ref := wl.Ref
		ref.UID = ""
		w.q.Add(wakeKey{workload: ref})
	}
}

// nodeChanged: the node lists other images.
func (w *Waker) nodeChanged(old, obj any) {
	o, ok1 := old.(*corev1.Node)
	n, ok2 := obj.(*corev1.Node)
	if ok1 && ok2 && !reflect.DeepEqual(o.Status.Images, n.Status.Images) {
		w.q.Add(wakeKey{node: n.Name})
	}
}

// Run works the queue until ctx ends.
func (w *Waker) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		w.q.ShutDown()
	}()
	for w.next(ctx) {
	}
}

func (w *Waker) next(ctx context.Context) bool {
	k, quit := w.q.Get()
	if quit {
		return false
	}
	defer w.q.Done(k)
	var outs []cloudevents.Event
	var err error
	if k.node != "" {
		outs, err = w.ctl.WakeNode(ctx, k.node)
	} else {
		outs, err = w.ctl.Wake(ctx, k.workload)
	}
	for _, e := range outs {
		if err == nil {
			err = w.publish(ctx, e)
		}
	}
	if err != nil && ctx.Err() == nil {
		w.log.Warn("wake-up failed; again after a back-off", "node", k.node, "workload", k.workload.String(), "err", err)
		w.q.AddRateLimited(k)
		return true
	}
	w.q.Forget(k)
	return true
}
