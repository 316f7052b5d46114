package kubelet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// Kubelet simulates a pool of nodes: a kubelet on each, and a scheduler
// binding pods to them. It works only through the API server.
type Kubelet struct {
	client kubernetes.Interface
	opts   Options
	t      Timings
	log    *slog.Logger

	nodes     map[string]*node
	nodeOrder []string

	pods        informers.SharedInformerFactory
	nodeInf     informers.SharedInformerFactory
	podLister   corelisters.PodLister
	podIndexer  cache.Indexer
	nodeLister  corelisters.NodeLister
	podQueue    workqueue.TypedRateLimitingInterface[string]
	schedQueue  workqueue.TypedRateLimitingInterface[string]
	nodeQueue   workqueue.TypedRateLimitingInterface[string]
	broadcaster record.EventBroadcaster // the scheduler's; each node has its own
	schedRec    record.EventRecorder
	activity    eventActivity // of every node's and the scheduler's Events

	mu      sync.Mutex
	workers map[string]*worker   // pod workers by namespace/name
	assumed map[types.UID]string // bound by us, not yet seen bound
	rr      int
	epoch   time.Time // the nodes' first relist

	base     context.Context // Start's context without its cancellation, for cleanup
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// New prepares a pool of simulated nodes; Start (or Run) registers them.
func New(client kubernetes.Interface, opts Options) (*Kubelet, error) {
	if opts.Resolver == nil {
		return nil, errors.New("new kubelet: Options.Resolver is required")
	}
	opts = opts.withDefaults()
	k := &Kubelet{
		client:  client,
		opts:    opts,
		t:       opts.Timings.withDefaults(),
		log:     opts.Logger,
		nodes:   map[string]*node{},
		workers: map[string]*worker{},
		assumed: map[types.UID]string{},
	}
	k.broadcaster = newBroadcaster()
	k.schedRec = recorder{k.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: opts.SchedulerName}), &k.activity}
	for i := 0; i < opts.Nodes; i++ {
		name := fmt.Sprintf("%s-%d", opts.NamePrefix, i)
		n, err := newNode(name, i, opts.PodCIDR)
		if err != nil {
			return nil, fmt.Errorf("new kubelet: %w", err)
		}
		n.res, n.timeout = opts.Resolver, 30*time.Second
		n.capacity = corev1.ResourceList{}
		for k, v := range opts.Capacity {
			n.capacity[corev1.ResourceName(k)] = v
		}
		n.events = newBroadcaster()
		n.rec = recorder{n.events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: name}), &k.activity}
		k.nodes[name] = n
		k.nodeOrder = append(k.nodeOrder, name)
	}
	return k, nil
}

// NodeNames lists the pool's nodes.
func (k *Kubelet) NodeNames() []string { return append([]string(nil), k.nodeOrder...) }

// Run starts the pool, blocks until ctx ends, then stops it.
func (k *Kubelet) Run(ctx context.Context) error {
	if err := k.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	k.Stop()
	return nil
}

// Start registers the nodes, starts heartbeats, the scheduler and the pod
// workers, and returns once the nodes are Ready and schedulable (the
// node-lifecycle controller removed their not-ready taint). The pool runs
// until ctx ends or Stop.
func (k *Kubelet) Start(ctx context.Context) error {
	k.base = context.WithoutCancel(ctx)
	k.epoch = time.Now()
	ctx, k.cancel = context.WithCancel(ctx)
	k.startEvents()
	if err := k.register(ctx); err != nil {
		k.Stop()
		return fmt.Errorf("start kubelet: %w", err)
	}
	if err := k.startInformers(ctx); err != nil {
		k.Stop()
		return fmt.Errorf("start kubelet: %w", err)
	}
	k.startWorkers(ctx)
	if err := k.waitSchedulable(ctx); err != nil {
		k.Stop()
		return fmt.Errorf("start kubelet: %w", err)
	}
	k.log.Info("simulated nodes ready", "nodes", k.nodeOrder)
	return nil
}

// Stop ends the pool: workers stop, and the Node objects are deleted
// unless Options.KeepNodes (their Leases go with them).
func (k *Kubelet) Stop() {
	k.stopOnce.Do(func() {
		if k.cancel != nil {
			k.cancel()
		}
		for _, q := range []interface{ ShutDown() }{k.podQueue, k.schedQueue, k.nodeQueue} {
			if q != nil {
				q.ShutDown()
			}
		}
		k.wg.Wait()
		k.stopEvents()
		if !k.opts.KeepNodes && k.base != nil {
			k.deleteNodes()
		}
	})
}

func (k *Kubelet) deleteNodes() {
	ctx, cancel := context.WithTimeout(k.base, 20*time.Second)
	defer cancel()
	for _, name := range k.nodeOrder {
		err := k.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil {
			k.log.Debug("delete node", "node", name, "err", err)
		}
	}
}

func (k *Kubelet) newQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	rl := workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 5*time.Second)
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}
