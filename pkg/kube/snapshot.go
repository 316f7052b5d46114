package kube

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/events"
)

// Snapshot is a Cache whose informers never run: a command that answers
// once and ends fills it with a few namespaced reads (ReadWorkload,
// ReadNamespace) under its own deadline, and then asks it what compute-spec
// asks its informers. A read that fails is an error, never a wait: an
// informer would retry an unreachable server forever.
type Snapshot struct {
	*Cache
	client kubernetes.Interface
}

// NewSnapshot is an empty Snapshot reading through client.
func NewSnapshot(client kubernetes.Interface) (*Snapshot, error) {
	c, err := NewCache(client, 0)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Cache: c, client: client}, nil
}

// ReadWorkload reads one workload (GET) and its pods (LIST by the
// workload's selector in its namespace; for a Deployment its ReplicaSets
// too). A workload that does not exist is a NotFound error.
func (s *Snapshot) ReadWorkload(ctx context.Context, ref events.ObjectRef) error {
	obj, sel, err := s.get(ctx, ref)
	if err != nil {
		return fmt.Errorf("get %s: %w", ref, err)
	}
	if err := s.add(obj); err != nil || sel == nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return fmt.Errorf("%s: selector: %w", ref, err)
	}
	list := metav1.ListOptions{LabelSelector: selector.String()}
	if ref.Kind == "Deployment" {
		sets, err := s.client.AppsV1().ReplicaSets(ref.Namespace).List(ctx, list)
		if err != nil {
			return fmt.Errorf("list replicasets of %s: %w", ref, err)
		}
		if err := s.addAll(sets); err != nil {
			return err
		}
	}
	pods, err := s.client.CoreV1().Pods(ref.Namespace).List(ctx, list)
	if err != nil {
		return fmt.Errorf("list pods of %s: %w", ref, err)
	}
	return s.addAll(pods)
}

// get reads the workload and its pod selector (nil for a bare pod).
func (s *Snapshot) get(ctx context.Context, ref events.ObjectRef) (runtime.Object, *metav1.LabelSelector, error) {
	ns, name, opts := ref.Namespace, ref.Name, metav1.GetOptions{}
	apps := s.client.AppsV1()
	switch ref.Kind {
	case "Deployment":
		o, err := apps.Deployments(ns).Get(ctx, name, opts)
		if err != nil {
			return nil, nil, err
		}
		return o, o.Spec.Selector, nil
	case "StatefulSet":
		o, err := apps.StatefulSets(ns).Get(ctx, name, opts)
		if err != nil {
			return nil, nil, err
		}
		return o, o.Spec.Selector, nil
	case "DaemonSet":
		o, err := apps.DaemonSets(ns).Get(ctx, name, opts)
		if err != nil {
			return nil, nil, err
		}
		return o, o.Spec.Selector, nil
	case "ReplicaSet":
		o, err := apps.ReplicaSets(ns).Get(ctx, name, opts)
		if err != nil {
			return nil, nil, err
		}
		return o, o.Spec.Selector, nil
	case "Pod":
		o, err := s.client.CoreV1().Pods(ns).Get(ctx, name, opts)
		return o, nil, err
	}
	return nil, nil, fmt.Errorf("workload kind %q is not managed", ref.Kind)
}

// ReadNamespace lists the pods and workloads of namespace ("" for every
// namespace): what a push may concern.
func (s *Snapshot) ReadNamespace(ctx context.Context, namespace string) error {
	apps, core, opts := s.client.AppsV1(), s.client.CoreV1(), metav1.ListOptions{}
	lists := []struct {
		what string
		list func() (runtime.Object, error)
	}{
		{"deployments", func() (runtime.Object, error) { return apps.Deployments(namespace).List(ctx, opts) }},
		{"statefulsets", func() (runtime.Object, error) { return apps.StatefulSets(namespace).List(ctx, opts) }},
		{"daemonsets", func() (runtime.Object, error) { return apps.DaemonSets(namespace).List(ctx, opts) }},
		{"replicasets", func() (runtime.Object, error) { return apps.ReplicaSets(namespace).List(ctx, opts) }},
		{"pods", func() (runtime.Object, error) { return core.Pods(namespace).List(ctx, opts) }},
	}
	for _, l := range lists {
		obj, err := l.list()
		if err != nil {
			return fmt.Errorf("list %s: %w", l.what, err)
		}
		if err := s.addAll(obj); err != nil {
			return err
		}
	}
	return nil
}

// addAll adds each item of a list.
func (s *Snapshot) addAll(list runtime.Object) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	for _, it := range items {
		if err := s.add(it); err != nil {
			return err
		}
	}
	return nil
}

// add puts obj, slimmed as the informers would, into its informer's store.
func (s *Snapshot) add(obj runtime.Object) error {
	store, err := s.storeFor(obj)
	if err != nil {
		return err
	}
	slim, err := s.transform(obj)
	if err != nil {
		return err
	}
	return store.Add(slim)
}

func (s *Snapshot) storeFor(obj runtime.Object) (cache.Indexer, error) {
	f := s.factory
	switch obj.(type) {
	case *appsv1.Deployment:
		return f.Apps().V1().Deployments().Informer().GetIndexer(), nil
	case *appsv1.StatefulSet:
		return f.Apps().V1().StatefulSets().Informer().GetIndexer(), nil
	case *appsv1.DaemonSet:
		return f.Apps().V1().DaemonSets().Informer().GetIndexer(), nil
	case *appsv1.ReplicaSet:
		return s.replicaSets.GetIndexer(), nil
	case *corev1.Pod:
		return s.pods.GetIndexer(), nil
	}
	return nil, fmt.Errorf("snapshot: %T is not a kind it holds", obj)
}
