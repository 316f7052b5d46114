package kube

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Reader is how a function reads what it decides on: pods, their owners
// and nodes. Every write goes to the API server, guarded (resourceVersion
// or a JSON-patch test), so a read a little behind is safe: the write
// fails and the function reads again.
type Reader interface {
	// Pod returns the pod (a copy the caller may change), or a NotFound
	// error.
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	// Pods lists the pods of namespace matching selector (copies).
	Pods(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Pod, error)
	// Node returns the node, or a NotFound error.
	Node(ctx context.Context, name string) (*corev1.Node, error)
	// Owner resolves the workload a pod belongs to, each link pinned to
	// its UID (LiveOwner).
	Owner(ctx context.Context, pod *corev1.Pod) (Workload, bool, error)
	// Wrote lays a pod as a write returned it over the reads, so the next
	// read sees at least that write, even before the watch brings it.
	Wrote(pod *corev1.Pod)
}

// Live reads from the API server, one GET per read: for Knative mode,
// where a function may scale to zero and keeps no cache, and for tests.
type Live struct{ Client kubernetes.Interface }

var _ Reader = Live{}

// Pod implements Reader.
func (l Live) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return l.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

// Pods implements Reader.
func (l Live) Pods(ctx context.Context, ns string, selector labels.Selector) ([]corev1.Pod, error) {
	list, err := l.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Node implements Reader.
func (l Live) Node(ctx context.Context, name string) (*corev1.Node, error) {
	return l.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// Owner implements Reader.
func (l Live) Owner(ctx context.Context, pod *corev1.Pod) (Workload, bool, error) {
	return LiveOwner(ctx, l.Client, pod)
}

// Wrote implements Reader: a GET always sees the write.
func (Live) Wrote(*corev1.Pod) {}

// Cached reads the informer cache, with the process's own pod writes laid
// over it (client-go's MutationCache, the service-account token
// controller's way). What the cache does not hold (a pod created a moment
// ago, a workload of a kind it does not watch) is read from the API
// server, so a miss is never taken for "gone" before the server says so.
type Cached struct {
	cache *Cache
	live  Live
	pods  cache.MutationCache
}

var _ Reader = (*Cached)(nil)

// mutationTTL is how long a pod written is preferred over an older cached
// copy: the watch brings the write long before.
const mutationTTL = time.Minute

// Reader returns the cache's Reader; client reads what the cache misses.
// One Reader per process, shared by its functions, so each sees the
// others' writes.
func (c *Cache) Reader(client kubernetes.Interface) *Cached {
	c.readerOnce.Do(func() {
		c.reader = &Cached{cache: c, live: Live{Client: client},
			pods: cache.NewIntegerResourceVersionMutationCache(klog.Background(), c.pods.GetStore(), c.pods.GetIndexer(), mutationTTL, false)}
	})
	return c.reader
}

// Pod implements Reader.
func (r *Cached) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	obj, ok, err := r.pods.GetByKey(ns + "/" + name)
	if err == nil && ok {
		if p, ok := obj.(*corev1.Pod); ok {
			return p.DeepCopy(), nil
		}
	}
	return r.live.Pod(ctx, ns, name)
}

// Pods implements Reader.
func (r *Cached) Pods(_ context.Context, ns string, selector labels.Selector) ([]corev1.Pod, error) {
	list, err := r.cache.Pods.Pods(ns).List(selector)
	if err != nil {
		return nil, err
	}
	out := make([]corev1.Pod, len(list))
	for i, p := range list {
		p.DeepCopyInto(&out[i])
	}
	return out, nil
}

// Node implements Reader.
func (r *Cached) Node(ctx context.Context, name string) (*corev1.Node, error) {
	if r.cache.Nodes != nil {
		if n, err := r.cache.Nodes.Get(name); err == nil {
			return n.DeepCopy(), nil
		}
	}
	return r.live.Node(ctx, name)
}

// Owner implements Reader: from the cache when it holds every link with
// the UID the pod names, else from the API server.
func (r *Cached) Owner(ctx context.Context, pod *corev1.Pod) (Workload, bool, error) {
	if w, ok := r.cache.pinnedOwner(pod); ok {
		return w, true, nil
	}
	return r.live.Owner(ctx, pod)
}

// Wrote implements Reader.
func (r *Cached) Wrote(pod *corev1.Pod) {
	if pod != nil {
		r.pods.Mutation(pod)
	}
}

// pinnedOwner is OwnerOf when every link of the chain is in the cache
// under the UID its child names; ok false otherwise (read it live).
func (c *Cache) pinnedOwner(pod *corev1.Pod) (Workload, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return podWorkload(pod), true
	}
	if c.ReplicaSets == nil {
		return Workload{}, false
	}
	var w Workload
	var err error
	ok := false
	switch ref.Kind {
	case "ReplicaSet":
		rs, gerr := c.ReplicaSets.ReplicaSets(pod.Namespace).Get(ref.Name)
		if gerr != nil || rs.UID != ref.UID {
			return Workload{}, false
		}
		d := metav1.GetControllerOf(rs)
		if d == nil {
			return replicaSetWorkload(rs), true
		}
		if d.Kind != "Deployment" {
			return Workload{}, false
		}
		w, ok, err = c.workload("Deployment", pod.Namespace, d.Name)
		ref = d
	case "StatefulSet", "DaemonSet":
		w, ok, err = c.workload(ref.Kind, pod.Namespace, ref.Name)
	default:
		return Workload{}, false
	}
	if err != nil || !ok || w.Ref.UID != string(ref.UID) {
		return Workload{}, false
	}
	return w, true
}

// OlderThan reports whether resourceVersion a is older than b, both the
// API server's integers (as the mutation cache compares them); false when
// either is not one.
func OlderThan(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}
