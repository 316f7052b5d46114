package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// byPod indexes EndpointSlices by the UID of each pod they hold an
// endpoint of.
const byPod = "pod"

// SliceReader reads the EndpointSlices that hold an endpoint of a pod:
// patch-pod sees from them that a gated pod left every Service.
type SliceReader interface {
	PodEndpointSlices(ctx context.Context, pod *corev1.Pod) ([]discoveryv1.EndpointSlice, error)
}

// WithEndpointSlices adds an informer on EndpointSlices, indexed by the
// pods their endpoints name (patch-pod's drain reads and watches them);
// call it before Start. The informer's objects are slim (no
// managedFields).
func (c *Cache) WithEndpointSlices() (*Cache, error) {
	inf := c.factory.Discovery().V1().EndpointSlices().Informer()
	if err := inf.AddIndexers(cache.Indexers{byPod: podEndpointIndex}); err != nil {
		return nil, fmt.Errorf("endpointslice indexers: %w", err)
	}
	c.slices = inf
	return c, nil
}

// SliceInformer is the EndpointSlice informer, for those who watch slices
// change; nil without WithEndpointSlices.
func (c *Cache) SliceInformer() cache.SharedIndexInformer { return c.slices }

// podEndpointIndex indexes a slice under the UID of each pod it names.
func podEndpointIndex(obj any) ([]string, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	var uids []string
	for _, e := range s.Endpoints {
		if e.TargetRef != nil && e.TargetRef.Kind == "Pod" && e.TargetRef.UID != "" {
			uids = append(uids, string(e.TargetRef.UID))
		}
	}
	return uids, nil
}

// EndpointPods are the namespace/name keys of the pods a slice holds an
// endpoint of (those an informer's event on it may concern).
func EndpointPods(s *discoveryv1.EndpointSlice) []string {
	var keys []string
	for _, e := range s.Endpoints {
		if e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
			keys = append(keys, s.Namespace+"/"+e.TargetRef.Name)
		}
	}
	return keys
}

// PodEndpointSlices implements SliceReader: from the cache with
// WithEndpointSlices, else a LIST of the pod's namespace.
func (r *Cached) PodEndpointSlices(ctx context.Context, pod *corev1.Pod) ([]discoveryv1.EndpointSlice, error) {
	if r.cache.slices == nil {
		return r.live.PodEndpointSlices(ctx, pod)
	}
	objs, err := r.cache.slices.GetIndexer().ByIndex(byPod, string(pod.UID))
	if err != nil {
		return nil, fmt.Errorf("endpointslices of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	out := make([]discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			out = append(out, *s.DeepCopy())
		}
	}
	return out, nil
}

// PodEndpointSlices implements SliceReader: a LIST of the pod's namespace.
func (l Live) PodEndpointSlices(ctx context.Context, pod *corev1.Pod) ([]discoveryv1.EndpointSlice, error) {
	list, err := l.Client.DiscoveryV1().EndpointSlices(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

var (
	_ SliceReader = Live{}
	_ SliceReader = (*Cached)(nil)
)
