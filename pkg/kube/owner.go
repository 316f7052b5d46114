package kube

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

// Workload is a pod's top-level owner as the cache has it.
type Workload struct {
	Ref      events.ObjectRef
	Meta     metav1.ObjectMeta
	Replicas int
	// MinReadySeconds is the workload's spec.minReadySeconds.
	MinReadySeconds int
	// RollingUpdate is the workload's own rolling-update bound; nil when it
	// has none (Recreate, OnDelete, a ReplicaSet or a bare pod).
	RollingUpdate *RollingUpdate
	// Object is the *appsv1.Deployment, StatefulSet, DaemonSet, ReplicaSet or *corev1.Pod.
	Object any
}

// OwnerOf resolves the workload a pod belongs to: a Deployment through its
// ReplicaSet, a StatefulSet, a DaemonSet, a ReplicaSet without a Deployment,
// or the pod itself when bare. Owners of other kinds (Jobs, operators'
// custom resources) are not workloads inplace manages: ok is false.
func (c *Cache) OwnerOf(pod *corev1.Pod) (w Workload, ok bool, err error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return podWorkload(pod), true, nil
	}
	switch ref.Kind {
	case "ReplicaSet":
		rs, err := c.ReplicaSets.ReplicaSets(pod.Namespace).Get(ref.Name)
		if err != nil {
			return w, false, ignoreNotFound(err)
		}
		if d := metav1.GetControllerOf(rs); d != nil {
			if d.Kind != "Deployment" {
				return w, false, nil
			}
			return c.workload("Deployment", pod.Namespace, d.Name)
		}
		return replicaSetWorkload(rs), true, nil
	case "StatefulSet", "DaemonSet":
		return c.workload(ref.Kind, pod.Namespace, ref.Name)
	}
	return w, false, nil
}

// Get returns the workload named by ref from the cache.
func (c *Cache) Get(ref events.ObjectRef) (Workload, bool, error) {
	return c.workload(ref.Kind, ref.Namespace, ref.Name)
}

func (c *Cache) workload(kind, ns, name string) (Workload, bool, error) {
	ref := events.ObjectRef{Kind: kind, Namespace: ns, Name: name}
	var obj metav1.Object
	replicas, minReady := 1, 0
	var err error
	switch kind {
	case "Deployment":
		var d *appsv1.Deployment
		if d, err = c.Deployments.Deployments(ns).Get(name); err == nil {
			obj, replicas, minReady = d, int(ptrOr(d.Spec.Replicas, 1)), int(d.Spec.MinReadySeconds)
		}
	case "StatefulSet":
		var s *appsv1.StatefulSet
		if s, err = c.StatefulSets.StatefulSets(ns).Get(name); err == nil {
			obj, replicas, minReady = s, int(ptrOr(s.Spec.Replicas, 1)), int(s.Spec.MinReadySeconds)
		}
	case "DaemonSet":
		var d *appsv1.DaemonSet
		if d, err = c.DaemonSets.DaemonSets(ns).Get(name); err == nil {
			obj, replicas, minReady = d, int(d.Status.DesiredNumberScheduled), int(d.Spec.MinReadySeconds)
		}
	case "ReplicaSet":
		var rs *appsv1.ReplicaSet
		if rs, err = c.ReplicaSets.ReplicaSets(ns).Get(name); err == nil {
			return replicaSetWorkload(rs), true, nil
		}
	case "Pod":
		var p *corev1.Pod
		if p, err = c.Pods.Pods(ns).Get(name); err == nil {
			return podWorkload(p), true, nil
		}
	default:
		return Workload{}, false, fmt.Errorf("workload kind %q is not managed", kind)
	}
	if err != nil {
		return Workload{}, false, ignoreNotFound(err)
	}
	ref.UID = string(obj.GetUID())
	return Workload{Ref: ref, Meta: *metaOf(obj), Replicas: replicas, MinReadySeconds: minReady,
		RollingUpdate: RollingUpdateOf(obj), Object: obj}, true, nil
}

func metaOf(o metav1.Object) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(),
		Annotations: o.GetAnnotations(), Labels: o.GetLabels(), Generation: o.GetGeneration()}
}

func podWorkload(p *corev1.Pod) Workload {
	return Workload{Ref: events.ObjectRef{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)},
		Meta: *metaOf(p), Replicas: 1, Object: p}
}

func replicaSetWorkload(rs *appsv1.ReplicaSet) Workload {
	return Workload{Ref: events.ObjectRef{Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name, UID: string(rs.UID)},
		Meta: *metaOf(rs), Replicas: int(ptrOr(rs.Spec.Replicas, 1)), MinReadySeconds: int(rs.Spec.MinReadySeconds), Object: rs}
}

// PodsOf returns the live pods of a workload (not terminating), by name,
// in a slice of the caller's own.
func (c *Cache) PodsOf(w events.ObjectRef) ([]*corev1.Pod, error) {
	var pods []*corev1.Pod
	switch w.Kind {
	case "Pod":
		p, err := c.Pods.Pods(w.Namespace).Get(w.Name)
		if err != nil {
			return nil, ignoreNotFound(err)
		}
		pods = []*corev1.Pod{p}
	case "Deployment":
		sets, err := c.replicaSets.GetIndexer().ByIndex(byOwner, "Deployment/"+w.Namespace+"/"+w.Name)
		if err != nil {
			return nil, err
		}
		lists := 0
		for _, s := range sets {
			rs := s.(*appsv1.ReplicaSet)
			more, err := c.owned.of(c.pods.GetIndexer(), "ReplicaSet/"+rs.Namespace+"/"+rs.Name)
			if err != nil {
				return nil, err
			}
			if len(more) > 0 {
				lists++
			}
			if pods == nil {
				pods = more
			} else {
				pods = append(pods, more...)
			}
		}
		if lists > 1 {
			slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		}
	default:
		var err error
		if pods, err = c.owned.of(c.pods.GetIndexer(), w.Kind+"/"+w.Namespace+"/"+w.Name); err != nil {
			return nil, err
		}
	}
	live := pods[:0]
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live = append(live, p)
		}
	}
	return live, nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
