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

// syncPod advances the pod worker of a pod bound to one of the pool's
// nodes to now and does what it asks: write the status it generated,
// delete the pod once its containers stopped.
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
	w := k.worker(key, pod, n)
	for {
		res := w.advance(ctx, pod, time.Now())
		switch {
		case res.status != nil:
			if pod, err = k.writeStatus(ctx, pod, *res.status, w.phase == terminated); err != nil {
				return 0, err
			}
			w.written()
		case res.delete:
			return 0, k.finishDeletion(ctx, key, pod)
		case res.next.IsZero():
			return 0, nil
		default:
			return max(time.Until(res.next), time.Millisecond), nil
		}
	}
}

// worker returns the pod's worker, creating it for a pod seen for the
// first time or recreated under the same name. A pod already finished
// when first seen gets a worker with nothing left to do but its deletion.
func (k *Kubelet) worker(key string, pod *corev1.Pod, n *node) *worker {
	k.mu.Lock()
	defer k.mu.Unlock()
	w, ok := k.workers[key]
	if ok && w.uid == pod.UID {
		return w
	}
	if ok {
		n.ipam.release(w.uid)
	}
	w = newWorker(n, k.t, k.epoch, pod.UID)
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		w.phase, w.want = terminated, false
		w.deleting = pod.DeletionTimestamp != nil
	}
	k.workers[key] = w
	return w
}

// poke tells the pod's worker the pod changed in a way the kubelet syncs
// for (spec, metadata, deletion, or readiness gates to reconcile).
func (k *Kubelet) poke(key string, old, cur *corev1.Pod) {
	if !needsSync(old, cur) {
		return
	}
	k.mu.Lock()
	w, ok := k.workers[key]
	k.mu.Unlock()
	if ok && w.uid == cur.UID {
		w.poke()
	}
}

// needsSync is the kubelet's view of a pod update: a changed spec or
// metadata is an update; a status-only change is not, unless its Ready
// condition disagrees with the readiness gates.
func needsSync(old, cur *corev1.Pod) bool {
	if old == nil || old.Generation != cur.Generation || !equality.Semantic.DeepEqual(old.Spec, cur.Spec) ||
		!equality.Semantic.DeepEqual(old.DeletionTimestamp, cur.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(old.Labels, cur.Labels) || !equality.Semantic.DeepEqual(old.Annotations, cur.Annotations) {
		return true
	}
	return readinessToReconcile(cur)
}

// readinessToReconcile is the kubelet's NeedToReconcilePodReadiness: the
// pod has readiness gates and its Ready condition is not what they and its
// containers say.
func readinessToReconcile(pod *corev1.Pod) bool {
	if len(pod.Spec.ReadinessGates) == 0 {
		return false
	}
	cur := findCondition(pod.Status.Conditions, corev1.PodReady)
	if cur == nil {
		return false
	}
	want := readyCondition(pod, pod.Status.Conditions, containersReadyCondition(pod, pod.Status))
	return cur.Status != want.Status || cur.Message != want.Message
}

// forget drops the worker of a pod that is gone.
func (k *Kubelet) forget(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w, ok := k.workers[key]; ok {
		for _, n := range k.nodes {
			n.ipam.release(w.uid)
		}
		delete(k.workers, key)
	}
}

// writeStatus writes a generated status as the kubelet's status manager
// does: the kubelet's conditions over the others' as the API server has
// them now, a terminal phase only once the pod's containers are stopped
// for good, and only when it differs. On conflict it merges again with a
// fresh read; a pod replaced meanwhile is left alone.
func (k *Kubelet) writeStatus(ctx context.Context, pod *corev1.Pod, st corev1.PodStatus, stopped bool) (*corev1.Pod, error) {
	cur := pod
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		merged := mergeStatus(cur.Status, st, stopped)
		if equality.Semantic.DeepEqual(cur.Status, merged) {
			return nil
		}
		upd := cur.DeepCopy()
		upd.Status = merged
		got, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{FieldManager: "kubelet"})
		switch {
		case err == nil:
			cur = got
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsConflict(err):
			return err
		}
		fresh, gerr := k.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if gerr != nil || fresh.UID != pod.UID {
			return nil
		}
		cur = fresh
		return err
	})
	return cur, err
}

// mergeStatus is the status manager's mergePodStatus: conditions others
// own as the API server has them, then the kubelet's; a pod that may still
// run containers does not turn Succeeded or Failed yet; a terminal pod is
// never Ready.
func mergeStatus(api, st corev1.PodStatus, stopped bool) corev1.PodStatus {
	out := *st.DeepCopy()
	out.Conditions = out.Conditions[:0:0]
	for _, c := range api.Conditions {
		if !isKubeletCondition(c.Type) {
			out.Conditions = append(out.Conditions, c)
		}
	}
	for _, c := range st.Conditions {
		if isKubeletCondition(c.Type) {
			out.Conditions = append(out.Conditions, c)
		}
	}
	if isTerminal(out.Phase) && !isTerminal(api.Phase) && !stopped {
		out.Phase, out.Reason, out.Message = api.Phase, api.Reason, api.Message
	}
	if isTerminal(out.Phase) {
		for i := range out.Conditions {
			if c := &out.Conditions[i]; (c.Type == corev1.PodReady || c.Type == corev1.ContainersReady) && c.Status == corev1.ConditionTrue {
				c.Status, c.Reason = corev1.ConditionFalse, terminalReason(out.Phase)
			}
		}
	}
	return out
}

func isTerminal(p corev1.PodPhase) bool { return p == corev1.PodSucceeded || p == corev1.PodFailed }

func terminalReason(p corev1.PodPhase) string {
	if p == corev1.PodFailed {
		return "PodFailed"
	}
	return "PodCompleted"
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
