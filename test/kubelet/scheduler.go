package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// unschedulableRetry is how soon an unschedulable pod is tried again
// (node changes also retry it).
const unschedulableRetry = 2 * time.Second

// schedulePod binds one pending pod to the least-loaded fitting node (ties
// go round-robin) through the pods/binding subresource, as the scheduler
// does, or marks it Unschedulable.
func (k *Kubelet) schedulePod(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := k.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) || err == nil && !k.needsScheduling(pod) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	nodes, err := k.nodeLister.List(labels.Everything())
	if err != nil {
		return 0, err
	}
	chosen, reasons := k.pick(pod, nodes)
	if chosen == "" {
		return unschedulableRetry, k.markUnschedulable(ctx, pod, unschedulableMessage(len(nodes), reasons))
	}
	return 0, k.bind(ctx, pod, chosen)
}

func (k *Kubelet) needsScheduling(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil &&
		pod.Spec.SchedulerName == k.opts.SchedulerName && len(pod.Spec.SchedulingGates) == 0 &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// pick returns the chosen node, or the reasons each node was refused.
func (k *Kubelet) pick(pod *corev1.Pod, nodes []*corev1.Node) (string, []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var best []string
	bestLoad := -1
	var reasons []string
	for _, name := range k.nodeOrder {
		n := findNode(nodes, name)
		if n == nil {
			continue
		}
		load := k.loadOf(name)
		ok, why := fits(pod, n, load)
		switch {
		case !ok:
			reasons = append(reasons, why)
		case bestLoad < 0 || load.pods < bestLoad:
			best, bestLoad = []string{name}, load.pods
		case load.pods == bestLoad:
			best = append(best, name)
		}
	}
	if len(best) == 0 {
		return "", reasons
	}
	k.rr++
	return best[k.rr%len(best)], nil
}

// loadOf counts the live pods bound to a node, plus those we bound that
// the informer has not shown bound yet. Callers hold k.mu.
func (k *Kubelet) loadOf(name string) nodeLoad {
	var l nodeLoad
	objs, _ := k.podIndexer.ByIndex(nodeNameIndex, name)
	seen := map[types.UID]bool{}
	for _, o := range objs {
		p := o.(*corev1.Pod)
		seen[p.UID] = true
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			l.add(p)
		}
	}
	for uid, node := range k.assumed {
		if node == name && !seen[uid] {
			l.pods++
		}
	}
	return l
}

func (k *Kubelet) bind(ctx context.Context, pod *corev1.Pod, node string) error {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node},
	}
	err := k.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or bound meanwhile
	}
	if err != nil {
		return fmt.Errorf("bind %s/%s to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	k.mu.Lock()
	k.assumed[pod.UID] = node
	k.mu.Unlock()
	k.schedRec.Eventf(pod, corev1.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, node)
	return nil
}

// observeBound drops a pod from the assumed set once the informer shows
// it bound.
func (k *Kubelet) observeBound(pod *corev1.Pod) {
	k.mu.Lock()
	delete(k.assumed, pod.UID)
	k.mu.Unlock()
}

// markUnschedulable sets PodScheduled=False (reason Unschedulable) with a
// strategic-merge patch of the status, which merges conditions by type.
func (k *Kubelet) markUnschedulable(ctx context.Context, pod *corev1.Pod, msg string) error {
	if c := findCondition(pod.Status.Conditions, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Message == msg {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: msg, LastTransitionTime: metav1.NewTime(time.Now()),
	}}}})
	if err != nil {
		return err
	}
	_, err = k.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("mark %s/%s unschedulable: %w", pod.Namespace, pod.Name, err)
	}
	k.schedRec.Event(pod, corev1.EventTypeWarning, "FailedScheduling", msg)
	return nil
}

// retryUnschedulable requeues the pending pods when a node changes.
func (k *Kubelet) retryUnschedulable() {
	if k.opts.DisableScheduler {
		return
	}
	objs, _ := k.podIndexer.ByIndex(nodeNameIndex, "")
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if k.needsScheduling(p) {
			if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
				k.schedQueue.Add(key)
			}
		}
	}
}

func findNode(nodes []*corev1.Node, name string) *corev1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}
