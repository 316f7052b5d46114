package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// Index names.
const (
	byRepository = "repository" // pods by canonical image repository
	byOwner      = "owner"      // pods and ReplicaSets by controller "Kind/ns/name"
)

// Cache is a set of informers on the objects compute-spec reads.
type Cache struct {
	factory      informers.SharedInformerFactory
	pods         cache.SharedIndexInformer
	replicaSets  cache.SharedIndexInformer
	slices       cache.SharedIndexInformer // WithEndpointSlices
	Pods         corelisters.PodLister
	ReplicaSets  appslisters.ReplicaSetLister
	Deployments  appslisters.DeploymentLister
	StatefulSets appslisters.StatefulSetLister
	DaemonSets   appslisters.DaemonSetLister
	// Nodes is set by WithNodes (pre-pull reads nodes' images).
	Nodes corelisters.NodeLister

	transform func(any) (any, error) // the informers' (NewTransform)

	readerOnce sync.Once
	reader     *Cached
	changes    changes
	owned      ownedPods
}

// WithNodes adds an informer on nodes; call it before Start.
func (c *Cache) WithNodes() *Cache {
	c.Nodes = c.factory.Core().V1().Nodes().Lister()
	return c
}

// NewCache builds the informers on pods and workloads; Start runs them.
func NewCache(client kubernetes.Interface, resync time.Duration) (*Cache, error) {
	c, err := NewPodCache(client, resync)
	if err != nil {
		return nil, err
	}
	f := c.factory
	c.replicaSets = f.Apps().V1().ReplicaSets().Informer()
	if err := c.replicaSets.AddIndexers(cache.Indexers{byOwner: ownerIndex}); err != nil {
		return nil, fmt.Errorf("replicaset indexers: %w", err)
	}
	c.ReplicaSets = f.Apps().V1().ReplicaSets().Lister()
	c.Deployments = f.Apps().V1().Deployments().Lister()
	c.StatefulSets = f.Apps().V1().StatefulSets().Lister()
	c.DaemonSets = f.Apps().V1().DaemonSets().Lister()
	if err := c.watchChanges(c.replicaSets, f.Apps().V1().Deployments().Informer(),
		f.Apps().V1().StatefulSets().Informer(), f.Apps().V1().DaemonSets().Informer()); err != nil {
		return nil, fmt.Errorf("workload change handlers: %w", err)
	}
	return c, nil
}

// NewPodCache builds the pod informer alone (the pod watcher's need):
// listing and watching pods is all it asks of RBAC.
func NewPodCache(client kubernetes.Interface, resync time.Duration) (*Cache, error) {
	c := &Cache{transform: NewTransform()}
	f := informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithTransform(c.transform))
	c.factory = f
	c.pods = f.Core().V1().Pods().Informer()
	if err := c.pods.AddIndexers(cache.Indexers{byRepository: repositoryIndex, byOwner: c.owned.index,
		byRunningImage: runningIndex}); err != nil {
		return nil, fmt.Errorf("pod indexers: %w", err)
	}
	c.Pods = f.Core().V1().Pods().Lister()
	return c, nil
}

// PodInformer gives the pod informer to those who watch pod changes.
func (c *Cache) PodInformer() cache.SharedIndexInformer { return c.pods }

// Start runs the informers until ctx ends and waits for their first sync.
func (c *Cache) Start(ctx context.Context) error {
	c.factory.Start(ctx.Done())
	for typ, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer cache for %v did not sync", typ)
		}
	}
	return nil
}

// StartWithin runs the informers until ctx ends and waits at most d for
// their first sync: for a command, which must not wait for an unreachable
// server forever. The error wraps context.DeadlineExceeded.
func (c *Cache) StartWithin(ctx context.Context, d time.Duration) error {
	c.factory.Start(ctx.Done())
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for typ, ok := range c.factory.WaitForCacheSync(wait.Done()) {
		if !ok {
			return fmt.Errorf("informer cache for %v did not sync: %w", typ, context.Cause(wait))
		}
	}
	return nil
}

// Shutdown waits for the informers to stop once the context Start got
// has ended: a command that runs them on a context of its own cancels it
// and shuts them down before it returns, so that none outlives it.
func (c *Cache) Shutdown() { c.factory.Shutdown() }

// repositoryIndex indexes a pod under the canonical repository of each of
// its containers, init containers included.
func repositoryIndex(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	seen := map[string]bool{}
	var keys []string
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			r, err := imageref.Parse(c.Image)
			if err != nil || seen[r.Name()] {
				continue
			}
			seen[r.Name()] = true
			keys = append(keys, r.Name())
		}
	}
	return keys, nil
}

// ownerIndex indexes an object under its controller, "Kind/ns/name".
func ownerIndex(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOf(m); ref != nil {
		return []string{ref.Kind + "/" + m.GetNamespace() + "/" + ref.Name}, nil
	}
	return nil, nil
}

// PodsUsingRepository returns the pods with a container from the canonical
// repository name ("docker.io/library/nginx").
func (c *Cache) PodsUsingRepository(name string) ([]*corev1.Pod, error) {
	objs, err := c.pods.GetIndexer().ByIndex(byRepository, name)
	if err != nil {
		return nil, fmt.Errorf("pods by repository %s: %w", name, err)
	}
	return toPods(objs), nil
}

func toPods(objs []any) []*corev1.Pod {
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	return pods
}

// ListPods lists the cached pods matching selector.
func (c *Cache) ListPods(selector labels.Selector) ([]*corev1.Pod, error) {
	return c.Pods.List(selector)
}

// NodeInformer is the node informer, for those who watch nodes change;
// nil without WithNodes.
func (c *Cache) NodeInformer() cache.SharedIndexInformer {
	if c.Nodes == nil {
		return nil
	}
	return c.factory.Core().V1().Nodes().Informer()
}

// NodeImages is a node's status.images; ok false when the cache does not
// hold the node (or holds no nodes: WithNodes).
func (c *Cache) NodeImages(name string) ([]corev1.ContainerImage, bool) {
	if c.Nodes == nil {
		return nil, false
	}
	n, err := c.Nodes.Get(name)
	if err != nil {
		return nil, false
	}
	return n.Status.Images, true
}

// PrepullPods are the cached pods of the pre-pull namespace.
func (c *Cache) PrepullPods(namespace string) ([]*corev1.Pod, error) {
	return c.Pods.Pods(namespace).List(labels.Everything())
}
