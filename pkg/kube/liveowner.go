package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
)

// LiveOwner resolves the workload a pod belongs to with fresh reads from the
// API server, as OwnerOf does from the cache: for the checks made right
// before a write, where a cache a few seconds old would let a workload that
// just lost its opt-in be written to. Each link of the chain must name the
// object by UID too: an owner deleted and recreated under the same name is
// not the pod's owner. ok is false for a pod whose owner is gone or of a
// kind inplace does not manage.
func LiveOwner(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod) (Workload, bool, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return podWorkload(pod), true, nil
	}
	ns, opts := pod.Namespace, metav1.GetOptions{}
	switch ref.Kind {
	case "ReplicaSet":
		rs, err := c.AppsV1().ReplicaSets(ns).Get(ctx, ref.Name, opts)
		if err != nil || rs.UID != ref.UID {
			return Workload{}, false, liveErr(err, "replicaset", ns, ref.Name)
		}
		d := metav1.GetControllerOf(rs)
		if d == nil {
			return replicaSetWorkload(rs), true, nil
		}
		if d.Kind != "Deployment" {
			return Workload{}, false, nil
		}
		dep, err := c.AppsV1().Deployments(ns).Get(ctx, d.Name, opts)
		if err != nil || dep.UID != d.UID {
			return Workload{}, false, liveErr(err, "deployment", ns, d.Name)
		}
		return liveWorkload("Deployment", dep, int(ptrOr(dep.Spec.Replicas, 1)), int(dep.Spec.MinReadySeconds)), true, nil
	case "StatefulSet":
		s, err := c.AppsV1().StatefulSets(ns).Get(ctx, ref.Name, opts)
		if err != nil || s.UID != ref.UID {
			return Workload{}, false, liveErr(err, "statefulset", ns, ref.Name)
		}
		return liveWorkload("StatefulSet", s, int(ptrOr(s.Spec.Replicas, 1)), int(s.Spec.MinReadySeconds)), true, nil
	case "DaemonSet":
		d, err := c.AppsV1().DaemonSets(ns).Get(ctx, ref.Name, opts)
		if err != nil || d.UID != ref.UID {
			return Workload{}, false, liveErr(err, "daemonset", ns, ref.Name)
		}
		return liveWorkload("DaemonSet", d, int(d.Status.DesiredNumberScheduled), int(d.Spec.MinReadySeconds)), true, nil
	}
	return Workload{}, false, nil
}

func liveWorkload(kind string, obj metav1.Object, replicas, minReady int) Workload {
	ref := events.ObjectRef{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
	return Workload{Ref: ref, Meta: *metaOf(obj), Replicas: replicas, MinReadySeconds: minReady, Object: obj}
}

// liveErr is nil for an owner that is gone or replaced (ok false says so)
// and the read error otherwise.
func liveErr(err error, kind, ns, name string) error {
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("get %s %s/%s: %w", kind, ns, name, err)
}
