package watcher

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// Publisher puts an event on the bus; *bus.Bus is one.
type Publisher interface {
	Publish(ctx context.Context, e cloudevents.Event) error
}

// Options tune a Watcher.
type Options struct {
	// Workers publish and write in parallel; default 2.
	Workers int
	Log     *slog.Logger
	Clock   clock.PassiveClock
	// Leader, when set, has this replica publish and open gates only
	// while it leads (bus.Leader: while it holds the watcher's lease), so
	// that of several replicas one does the work; nil: always.
	Leader Elector
}

// Elector runs lead each time this replica becomes the leader, with a
// context that ends when it no longer is, and returns when ctx ends;
// bus.Leader is one.
type Elector interface {
	Run(ctx context.Context, lead func(context.Context))
}

// item is one unit of work: an event to publish (by queueKey) or a pod
// whose gate to open (by namespace/name).
type item struct {
	gate bool
	key  string
}

// Watcher publishes pod events and opens gates.
type Watcher struct {
	pods   cache.SharedIndexInformer
	client kubernetes.Interface
	pub    Publisher
	opts   Options
	queue  workqueue.TypedRateLimitingInterface[item]
	// leading: this replica publishes; changes seen otherwise are
	// dropped (the leader has them).
	leading atomic.Bool

	mu      sync.Mutex
	pending map[string]*pendingEvent // by queueKey, until published
	states  states
}

// New registers the watcher on a pod informer, which the caller starts
// (kube.Cache.Start); client writes the gate condition (pods/status
// patch); pub takes the events.
func New(pods cache.SharedIndexInformer, client kubernetes.Interface, pub Publisher, opts Options) (*Watcher, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rl := workqueue.NewTypedItemExponentialFailureRateLimiter[item](100*time.Millisecond, 30*time.Second)
	w := &Watcher{pods: pods, client: client, pub: pub, opts: opts, pending: map[string]*pendingEvent{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[item]{Name: "pod-watcher"})}
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(nil, obj) },
		UpdateFunc: func(old, cur any) { w.observe(old, cur) },
		DeleteFunc: w.deleted,
	})
	if err != nil {
		return nil, fmt.Errorf("pod watcher: %w", err)
	}
	w.leading.Store(opts.Leader == nil)
	return w, nil
}

// Run works the queue until ctx ends (with a Leader, while this replica
// leads).
func (w *Watcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range w.opts.Workers {
		wg.Go(func() {
			for w.next(ctx) {
			}
		})
	}
	if w.opts.Leader != nil {
		w.opts.Leader.Run(ctx, w.lead)
	}
	<-ctx.Done()
	w.queue.ShutDown()
	wg.Wait()
	return nil
}

// lead is the watcher's work while this replica leads: from every pod as
// the informer has it now (each seen for the first time: what a leader
// before may have published already has the same ids, which the stream's
// dedup window drops), then each change, until ctx ends; then what waits
// is dropped.
func (w *Watcher) lead(ctx context.Context) {
	w.leading.Store(true)
	w.opts.Log.Info("pod watcher: leading")
	for _, obj := range w.pods.GetStore().List() {
		w.observe(nil, obj)
	}
	<-ctx.Done()
	w.leading.Store(false)
	w.mu.Lock()
	clear(w.pending)
	w.mu.Unlock()
	w.states.clear()
	w.opts.Log.Info("pod watcher: no longer leading")
}

// observe queues the events of one change and, if needed, the gate.
func (w *Watcher) observe(oldObj, curObj any) {
	cur, ok := curObj.(*corev1.Pod)
	if !ok || !w.leading.Load() {
		return
	}
	old, _ := oldObj.(*corev1.Pod)
	st, updated, restarts, err := changed(old, cur, w.states.parse)
	if err != nil {
		w.opts.Log.Error("pod watcher: events of a pod", "pod", cur.Namespace+"/"+cur.Name, "err", err)
	}
	if updated {
		w.add(updatedKey(cur), &pendingEvent{pod: cur, st: st})
	}
	w.enqueue(cur, restarts...)
	if NeedsGate(cur) {
		w.queue.Add(item{gate: true, key: cur.Namespace + "/" + cur.Name})
	}
}

func (w *Watcher) deleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || !w.leading.Load() {
		return
	}
	w.states.forget(pod.UID)
	if e, ok, err := Deleted(pod); err != nil {
		w.opts.Log.Error("pod watcher: event of a deleted pod", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	} else if ok {
		w.enqueue(pod, e)
	}
}

// enqueue queues pod's events. A pod.updated not yet published is
// replaced by a newer one of the same pod: it stands for the pod's state,
// and verify reads the pod as it is now from its cache (level-triggered),
// so under load verify hears of a pod once per turn of the queue instead
// of once per change the kubelet made meanwhile. container.restarted and
// the others are published each.
func (w *Watcher) enqueue(pod *corev1.Pod, outs ...cloudevents.Event) {
	for _, e := range outs {
		w.add(queueKey(pod, e), &pendingEvent{e: e})
	}
}

// add queues p under key, in place of what waits there.
func (w *Watcher) add(key string, p *pendingEvent) {
	w.mu.Lock()
	w.pending[key] = p
	w.mu.Unlock()
	w.queue.Add(item{key: key})
}

// pendingEvent is an event waiting to be published: made already, or the
// pod.updated of pod (the informer's copy, read only), made when it is
// published, so the updates of a pod that a newer one replaces before
// then are never encoded.
type pendingEvent struct {
	e   cloudevents.Event
	pod *corev1.Pod
	st  *inplace.State
}

func (p *pendingEvent) event() (cloudevents.Event, error) {
	if p.pod == nil {
		return p.e, nil
	}
	return podUpdated(p.pod, p.st, "")
}

// queueKey is where e waits to be published: pod.updated by pod (UID:
// a replacement of the same name is another pod), others by id.
func queueKey(pod *corev1.Pod, e cloudevents.Event) string {
	if e.Type() == events.PodUpdated {
		return updatedKey(pod)
	}
	return e.ID()
}

func updatedKey(pod *corev1.Pod) string { return events.PodUpdated + "/" + string(pod.UID) }

// next works one item; false when the queue is shut down.
func (w *Watcher) next(ctx context.Context) bool {
	it, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(it)
	var err error
	switch {
	case !w.leading.Load(): // the leader has it
	case it.gate:
		err = w.openGate(ctx, it.key)
	default:
		err = w.publish(ctx, it.key)
	}
	if err != nil && ctx.Err() == nil {
		w.opts.Log.Warn("pod watcher: will retry", "item", it.key, "gate", it.gate, "err", err)
		w.queue.AddRateLimited(it)
		return true
	}
	w.queue.Forget(it)
	return true
}

// publish sends a pending event; it stays pending until the bus took it
// (or a newer one of the same key took its place: queued again).
func (w *Watcher) publish(ctx context.Context, key string) error {
	w.mu.Lock()
	p, ok := w.pending[key]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	e, err := p.event()
	if err != nil { // the same pod makes the same error again: not retried
		w.opts.Log.Error("pod watcher: event of a pod", "key", key, "err", err)
	} else if err := w.pub.Publish(ctx, e); err != nil {
		return fmt.Errorf("publish %s %s: %w", e.Type(), e.ID(), err)
	}
	w.mu.Lock()
	if w.pending[key] == p {
		delete(w.pending, key)
	}
	w.mu.Unlock()
	return nil
}
