package e2e_test

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// monitor watches the pods of an app and keeps what a test samples: the
// most pods ever NotReady at once, each pod's image history, and any pod
// seen patched but Ready before its upgrade finished.
type monitor struct {
	mu                  sync.Mutex
	ready               map[string]bool
	images              map[string][]string
	maxDown             int
	readyWhileUpgrading []string
	stop                context.CancelFunc
	done                chan struct{}
}

func (e *env) watchPods(app string) *monitor {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	w, err := e.w.Client().CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	m := &monitor{ready: map[string]bool{}, images: map[string][]string{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				m.observe(ev.Type, pod)
			}
		}
	}()
	e.t.Cleanup(m.close)
	return m
}

func (m *monitor) observe(typ watch.EventType, pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if typ == watch.Deleted {
		delete(m.ready, pod.Name)
		return
	}
	m.ready[pod.Name] = world.PodReady(pod)
	img := pod.Spec.Containers[0].Image
	if h := m.images[pod.Name]; len(h) == 0 || h[len(h)-1] != img {
		m.images[pod.Name] = append(h, img)
	}
	down := 0
	for _, r := range m.ready {
		if !r {
			down++
		}
	}
	m.maxDown = max(m.maxDown, down)
	// Once its image changed, a gated pod may be Ready only after verify
	// opened its gate.
	if h := m.images[pod.Name]; len(h) > 1 && world.PodReady(pod) && gateReason(pod) != inplace.GateReasonDone {
		m.readyWhileUpgrading = append(m.readyWhileUpgrading, pod.Name+"@"+pod.ResourceVersion+" gate "+gateReason(pod))
	}
}

func (m *monitor) close() {
	m.stop()
	<-m.done
}

// results stops the monitor and returns what it saw.
func (m *monitor) results() (maxDown int, images map[string][]string, readyWhileUpgrading []string) {
	m.close()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.maxDown, m.images, m.readyWhileUpgrading
}

// gateReason is the reason of the pod's inplace.dev/ready condition.
func gateReason(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if string(c.Type) == inplace.ReadinessGate {
			return c.Reason
		}
	}
	return ""
}
