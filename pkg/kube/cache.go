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

	readerOnce sync.Once
	reader     *Cached
	changes    changes
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
	f := informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithTransform(Slim))
	c := &Cache{factory: f}
	c.pods = f.Core().V1().Pods().Informer()
	if err := c.pods.AddIndexers(cache.Indexers{byRepository: repositoryIndex, byOwner: ownerIndex}); err != nil {
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

// StripManagedFields drops metadata.managedFields from cached objects: it is
// about half of a pod's size and nothing here reads it.
func StripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
		m.GetObjectMeta().SetManagedFields(nil)
	}
	return obj, nil
}

// Slim is the cache's transform: managedFields dropped from every object,
// and from pods what no function reads (SlimPod).
func Slim(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		SlimPod(p)
	}
	return StripManagedFields(obj)
}

// SlimPod drops from a cached pod what no function reads, a quarter of its
// memory at 10,000 pods (BenchmarkCachedPod): volumes, tolerations,
// affinity, and each container's command, args, env, ports, mounts,
// probes and lifecycle hooks (a preStop hook is kept as an empty handler:
// that there is one, which patch-pod reads, not what it runs). Kept:
// metadata, names, images, resources and resize policies, readiness
// gates, node, and the whole status. The pods
// in pod.updated events come from this cache, so they are slim too; a full
// pod is a GET away. Nothing writes a cached pod back whole (every write is
// a patch).
func SlimPod(p *corev1.Pod) {
	p.Spec.Volumes, p.Spec.Tolerations, p.Spec.Affinity = nil, nil, nil
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range list {
			slimContainer(&list[i])
		}
	}
	for i := range p.Spec.EphemeralContainers {
		c := &p.Spec.EphemeralContainers[i].EphemeralContainerCommon
		c.Command, c.Args, c.Env, c.EnvFrom, c.Ports, c.VolumeMounts, c.VolumeDevices = nil, nil, nil, nil, nil, nil, nil
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	}
}

func slimContainer(c *corev1.Container) {
	c.Command, c.Args, c.Env, c.EnvFrom, c.Ports, c.VolumeMounts, c.VolumeDevices = nil, nil, nil, nil, nil, nil, nil
	hook := c.Lifecycle != nil && c.Lifecycle.PreStop != nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	if hook {
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{}}
	}
}

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
