package kubelet

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// leaseNamespace holds the node Leases the node-lifecycle controller reads.
const leaseNamespace = "kube-node-lease"

// register creates (or re-registers) every Node and its Lease.
func (k *Kubelet) register(ctx context.Context) error {
	now := time.Now()
	for _, name := range k.nodeOrder {
		obj := k.nodes[name].object(k.opts, now)
		_, err := k.client.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = k.syncNodeStatus(ctx, name)
		}
		if err != nil {
			return fmt.Errorf("register node %s: %w", name, err)
		}
		if err := k.renewLease(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// renewLease renews (or creates) the node's Lease, as the kubelet does
// every 10s; the node-lifecycle controller treats a node whose Lease is
// not renewed for --node-monitor-grace-period as unreachable.
func (k *Kubelet) renewLease(ctx context.Context, name string) error {
	now := metav1.NewMicroTime(time.Now())
	leases := k.client.CoordinationV1().Leases(leaseNamespace)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, k.newLease(ctx, name, now), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create lease %s: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease %s: %w", name, err)
	}
	l.Spec.RenewTime = &now
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renew lease %s: %w", name, err)
	}
	return nil
}

func (k *Kubelet) newLease(ctx context.Context, name string, now metav1.MicroTime) *coordinationv1.Lease {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: leaseNamespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr(name),
			LeaseDurationSeconds: ptr(int32(40)),
			RenewTime:            &now,
		},
	}
	if n, err := k.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil {
		l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: n.UID}}
	}
	return l
}

// syncNodeStatus rewrites the node's status: heartbeat, conditions and
// the images in its store. Status fields others own are kept.
func (k *Kubelet) syncNodeStatus(ctx context.Context, name string) error {
	n := k.nodes[name]
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := k.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s: %w", name, err)
		}
		now := time.Now()
		want := n.object(k.opts, now)
		cur.Status.Conditions = nodeConditions(cur.Status.Conditions, now)
		cur.Status.Images = n.listedImages()
		cur.Status.Capacity, cur.Status.Allocatable = want.Status.Capacity, want.Status.Allocatable
		cur.Status.Addresses, cur.Status.DaemonEndpoints = want.Status.Addresses, want.Status.DaemonEndpoints
		if cur.Status.NodeInfo.KubeletVersion == "" {
			cur.Status.NodeInfo = want.Status.NodeInfo
		}
		_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// refreshImages is the kubelet's image list cache, refreshed every
// ImageListPeriod: a node whose list changed has its status rewritten,
// so node.status.images shows a pull only after the next refresh (up to
// 30s after it on a real kubelet, plus its 10s status period).
func (k *Kubelet) refreshImages(ctx context.Context) {
	wait.Until(func() {
		now := time.Now()
		for _, name := range k.nodeOrder {
			if k.nodes[name].refreshImages(now) {
				k.nodeQueue.Add(name)
			}
		}
	}, k.t.ImageListPeriod, ctx.Done())
}

// heartbeat renews the Leases every Heartbeat and rewrites node status
// every fourth beat, until ctx ends.
func (k *Kubelet) heartbeat(ctx context.Context) {
	beat := 0
	wait.Until(func() {
		beat++
		for _, name := range k.nodeOrder {
			if err := k.renewLease(ctx, name); err != nil && ctx.Err() == nil {
				k.log.Warn("node lease", "node", name, "err", err)
			}
			if beat%4 == 0 {
				k.nodeQueue.Add(name)
			}
		}
	}, k.t.Heartbeat, ctx.Done())
}

// waitSchedulable waits until every node is Ready and the node-lifecycle
// controller has removed its not-ready (or unreachable) taint.
func (k *Kubelet) waitSchedulable(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		for _, name := range k.nodeOrder {
			n, err := k.nodeLister.Get(name)
			if err != nil || !nodeReady(n) || hasLifecycleTaint(n) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for nodes to be schedulable (is the node-lifecycle controller running?): %w", err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasLifecycleTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return true
		}
	}
	return false
}
