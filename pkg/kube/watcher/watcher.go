package watcher

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/inplace-dev/inplace/events"
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

	mu      sync.Mutex
	pending map[string]cloudevents.Event // by queueKey, until published
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
	w := &Watcher{pods: pods, client: client, pub: pub, opts: opts, pending: map[string]cloudevents.Event{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[item]{Name: "pod-watcher"})}
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(nil, obj) },
		UpdateFunc: func(old, cur any) { w.observe(old, cur) },
		DeleteFunc: w.deleted,
	})
	if err != nil {
		return nil, fmt.Errorf("pod watcher: %w", err)
	}
	return w, nil
}

// Run works the queue until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range w.opts.Workers {
		wg.Go(func() {
			for w.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	w.queue.ShutDown()
	wg.Wait()
	return nil
}

// observe queues the events of one change and, if needed, the gate.
func (w *Watcher) observe(oldObj, curObj any) {
	cur, ok := curObj.(*corev1.Pod)
	if !ok {
		return
	}
	old, _ := oldObj.(*corev1.Pod)
	outs, err := Changes(old, cur)
	if err != nil {
		w.opts.Log.Error("pod watcher: events of a pod", "pod", cur.Namespace+"/"+cur.Name, "err", err)
	}
	w.enqueue(cur, outs...)
	if NeedsGate(cur) {
		w.queue.Add(item{gate: true, key: cur.Namespace + "/" + cur.Name})
	}
}

func (w *Watcher) deleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
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
		key := queueKey(pod, e)
		w.mu.Lock()
		w.pending[key] = e
		w.mu.Unlock()
		w.queue.Add(item{key: key})
	}
}

// queueKey is where e waits to be published: pod.updated by pod (UID:
// a replacement of the same name is another pod), others by id.
func queueKey(pod *corev1.Pod, e cloudevents.Event) string {
	if e.Type() == events.PodUpdated {
		return events.PodUpdated + "/" + string(pod.UID)
	}
	return e.ID()
}

// next works one item; false when the queue is shut down.
func (w *Watcher) next(ctx context.Context) bool {
	it, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(it)
	var err error
	if it.gate {
		err = w.openGate(ctx, it.key)
	} else {
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
	e, ok := w.pending[key]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	if err := w.pub.Publish(ctx, e); err != nil {
		return fmt.Errorf("publish %s %s: %w", e.Type(), e.ID(), err)
	}
	w.mu.Lock()
	if cur, ok := w.pending[key]; ok && cur.ID() == e.ID() {
		delete(w.pending, key)
	}
	w.mu.Unlock()
	return nil
}
