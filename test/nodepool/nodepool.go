package nodepool

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/proc"
)

// StartScheduler runs binDir/kube-scheduler against kubeconfig, its log
// and serving certificate in dir, its secure port a free loopback one.
func StartScheduler(dir, binDir, kubeconfig string) (*proc.Process, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "scheduler-pki"),
	}
	return proc.Start(dir, "kube-scheduler", filepath.Join(binDir, "kube-scheduler"), args)
}

// WaitSchedulable waits until every named node is Ready without the
// not-ready or unreachable taint, failing early when one of procs exits
// (nil entries are skipped).
func WaitSchedulable(ctx context.Context, client kubernetes.Interface, names []string, timeout time.Duration, procs ...*proc.Process) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range procs {
			if p == nil {
				continue
			}
			if err := p.ErrExited(); err != nil {
				return false, err
			}
		}
		for _, name := range names {
			node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !Ready(node) || notReadyTaint(node) {
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

// DeleteNodes deletes the named Node objects, so that the node-lifecycle
// controller does not evict pods of a shared cluster from dead nodes.
// Failures are logged at debug level: a node may never have registered.
func DeleteNodes(client kubernetes.Interface, names []string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, name := range names {
		if err := client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			log.Debug("delete node", "node", name, "err", err)
		}
	}
}

// Ready reports the node's Ready condition is True.
func Ready(n *corev1.Node) bool {
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

// FreePort is a TCP port free on 127.0.0.1 at the time of the call.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
