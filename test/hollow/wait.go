package hollow

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// waitSchedulable waits until every node is Ready without the not-ready
// taint, failing early when a process exits.
func (n *Nodes) waitSchedulable(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, p := range n.procs {
			if err := p.ErrExited(); err != nil {
				return false, err
			}
		}
		if n.scheduler != nil {
			if err := n.scheduler.ErrExited(); err != nil {
				return false, err
			}
		}
		for _, name := range n.names {
			node, err := n.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !ready(node) || notReadyTaint(node) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for nodes to be Ready and schedulable: %w", err)
	}
	return nil
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func notReadyTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return true
		}
	}
	return false
}
