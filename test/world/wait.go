package world

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/eventually"
)

// Eventually polls cond every 50ms until it returns true (with a nil
// error) or timeout passes: eventually.Poll. An error from cond counts as
// "not yet"; on timeout the returned error names what was awaited and
// cond's last error.
func Eventually(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	return eventually.Poll(ctx, timeout, what, cond)
}

// Until is Eventually for a condition of the test's own: it fails t,
// naming what was awaited, when cond does not hold within timeout
// (eventually.Until).
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	eventually.Until(t, timeout, what, cond)
}

// WaitPod waits until the named pod satisfies cond and returns it.
func WaitPod(ctx context.Context, c kubernetes.Interface, ns, name string, timeout time.Duration,
	what string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := Eventually(ctx, timeout, fmt.Sprintf("pod %s/%s: %s", ns, name, what), func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return cond(p), nil
	})
	return pod, err
}

// WaitPods waits until the pods matching selector in ns satisfy cond and
// returns them.
func WaitPods(ctx context.Context, c kubernetes.Interface, ns, selector string, timeout time.Duration,
	what string, cond func([]corev1.Pod) bool) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	err := Eventually(ctx, timeout, fmt.Sprintf("pods %s in %s: %s", selector, ns, what), func(ctx context.Context) (bool, error) {
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		pods = l.Items
		return cond(l.Items), nil
	})
	return pods, err
}

// PodReady reports the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool { return condition(p, corev1.PodReady) == corev1.ConditionTrue }

// AllReady reports n pods, all Ready and none terminating.
func AllReady(n int) func([]corev1.Pod) bool {
	return func(pods []corev1.Pod) bool {
		if len(pods) != n {
			return false
		}
		for i := range pods {
			if pods[i].DeletionTimestamp != nil || !PodReady(&pods[i]) {
				return false
			}
		}
		return true
	}
}

// ContainerStatus returns the status of the named container (regular or
// init), or nil.
func ContainerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
