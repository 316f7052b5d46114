package kubelet

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
)

// drain processes keys of q with sync until the queue shuts down: an error
// retries the key with back-off, a positive delay looks at it again then.
func (k *Kubelet) drain(ctx context.Context, q workqueue.TypedRateLimitingInterface[string],
	sync func(context.Context, string) (time.Duration, error)) {
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		after, err := sync(ctx, key)
		switch {
		case err != nil && ctx.Err() == nil:
			k.log.Debug("sync failed, retrying", "key", key, "err", err)
			q.AddRateLimited(key)
		case after > 0:
			q.Forget(key)
			q.AddAfter(key, after)
		default:
			q.Forget(key)
		}
		q.Done(key)
	}
}

// syncPod is one kubelet sync of a pod bound to one of the pool's nodes:
// advance its containers, write its status, finish its deletion.
func (k *Kubelet) syncPod(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := k.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		k.forget(key)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, ours := k.nodes[pod.Spec.NodeName]
	if !ours {
		k.forget(key)
		return 0, nil
	}
	now := time.Now()
	rt := k.runtime(key, pod, n, now)
	if rt == nil { // finished before we knew it: only its deletion is left
		return 0, k.finishDeletion(ctx, key, pod)
	}
	s := &syncer{ctx: ctx, h: n, t: k.t, pod: pod, now: now}
	next := s.advance(rt)
	if err := k.writeStatus(ctx, pod, rt, n, now); err != nil {
		return 0, err
	}
	if pod.DeletionTimestamp != nil && rt.stopped {
		return 0, k.finishDeletion(ctx, key, pod)
	}
	if next.IsZero() {
		return 0, nil
	}
	return max(next.Sub(time.Now()), time.Millisecond), nil
}

// runtime returns the pod's runtime state, creating it (with a pod IP,
// like a new sandbox) for a pod seen for the first time or recreated
// under the same name. A pod already finished when first seen has none.
func (k *Kubelet) runtime(key string, pod *corev1.Pod, n *node, now time.Time) *podRuntime {
	k.mu.Lock()
	defer k.mu.Unlock()
	rt, ok := k.runtimes[key]
	if ok && rt.uid == pod.UID {
		return rt
	}
	if ok {
		n.ipam.release(rt.uid)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		delete(k.runtimes, key)
		return nil
	}
	rt = newPodRuntime(pod.UID, now)
	rt.podIP = n.ip
	if !pod.Spec.HostNetwork {
		rt.podIP = n.ipam.allocate(pod.UID)
	}
	k.runtimes[key] = rt
	return rt
}

// forget drops the runtime state of a pod that is gone.
func (k *Kubelet) forget(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if rt, ok := k.runtimes[key]; ok {
		for _, n := range k.nodes {
			n.ipam.release(rt.uid)
		}
		delete(k.runtimes, key)
	}
}

// writeStatus writes the pod's status when it differs from what the API
// server has, on conflict recomputing it from a fresh read so conditions
// written by others are never lost. If the spec changed meanwhile, it
// stops: the informer delivers the change and the next sync acts on it.
func (k *Kubelet) writeStatus(ctx context.Context, pod *corev1.Pod, rt *podRuntime, n *node, now time.Time) error {
	cur := pod
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		st := podStatus(cur, rt, n.ip, now)
		if equality.Semantic.DeepEqual(cur.Status, st) {
			return nil
		}
		upd := cur.DeepCopy()
		upd.Status = st
		_, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{FieldManager: "kubelet"})
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh, gerr := k.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if gerr != nil || fresh.UID != pod.UID || fresh.Generation != pod.Generation {
			return nil
		}
		cur = fresh
		return err
	})
}

// finishDeletion deletes a terminated pod for good (grace 0, pinned to its
// UID), as the kubelet does once its containers have stopped.
func (k *Kubelet) finishDeletion(ctx context.Context, key string, pod *corev1.Pod) error {
	if pod.DeletionTimestamp == nil {
		return nil
	}
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	k.forget(key)
	return nil
}

// syncNode rewrites a node's status (heartbeat, images).
func (k *Kubelet) syncNode(ctx context.Context, name string) (time.Duration, error) {
	return 0, k.syncNodeStatus(ctx, name)
}
