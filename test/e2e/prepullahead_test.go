package e2e_test

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// A DaemonSet (a pod on every node) upgraded one pod at a time
// (max-unavailable 1) to an image no node has: pre-pull starts on every
// node as soon as the rollout is recorded, not when each node's pod gets
// its turn. Shown by the API server's order of writes (resourceVersions):
// every node's pre-pull pod is created before the second pod is patched.
func TestPrepullAheadOnEveryNode(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	nodes, err := e.w.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) < 3 {
		t.Skipf("%d nodes; the test wants at least 3", len(nodes.Items))
	}
	e.push("agent", "1.0.0")
	e.daemonSet("agent", e.ref("agent", "1.0.0"), map[string]string{
		"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"})

	w := e.order("inplace-system", prepull.Selector, "app=agent")
	digest := e.push("agent", "1.1.0")
	e.waitAllOn("agent", len(nodes.Items), digest, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/agent", time.Minute)
	created, patched := w.stop()

	if len(patched) != len(nodes.Items) {
		t.Fatalf("%d pods patched (%v); want %d", len(patched), patched, len(nodes.Items))
	}
	second := patched[1]
	for _, n := range nodes.Items {
		rv, ok := created[n.Name]
		switch {
		case !ok:
			t.Errorf("node %s: no pre-pull pod was created", n.Name)
		case rv > second:
			t.Errorf("node %s: pre-pull pod created at resourceVersion %d, after the second pod was patched (%d); patches at %v",
				n.Name, rv, second, patched)
		}
	}
}

// A StatefulSet upgraded one pod at a time to an image no node has: as
// for a DaemonSet, every node its pods run on starts pulling as soon as
// the rollout is recorded, before the second pod is patched, although
// compute-spec holds the StatefulSet (and waits for its controller to
// observe the hold) before the first plan goes out.
func TestPrepullAheadForAStatefulSet(t *testing.T) {
	e := newEnv(t)
	e.push("db", "1.0.0")
	const n = 4
	e.deploy(workload{name: "db", replicas: n, image: e.ref("db", "1.0.0"), statefulSet: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})
	nodes := map[string]bool{}
	for _, p := range e.pods("db") {
		nodes[p.Node] = true
	}

	w := e.order("inplace-system", prepull.Selector, "app=db")
	digest := e.push("db", "1.1.0")
	e.waitAllOn("db", n, digest, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/db", time.Minute)
	created, patched := w.stop()

	if len(patched) != n {
		t.Fatalf("%d pods patched (%v); want %d", len(patched), patched, n)
	}
	second := patched[1]
	for node := range nodes {
		rv, ok := created[node]
		switch {
		case !ok:
			t.Errorf("node %s: no pre-pull pod was created", node)
		case rv > second:
			t.Errorf("node %s: pre-pull pod created at resourceVersion %d, after the second pod was patched (%d); patches at %v",
				node, rv, second, patched)
		}
	}
}

// daemonSet creates a DaemonSet of one container and waits for its pods.
func (e *env) daemonSet(name, image string, annotations map[string]string) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Annotations: annotations},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}}}
	if _, err := e.w.Client().AppsV1().DaemonSets(e.ns).Create(e.t.Context(), ds, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	nodes, err := e.w.Client().CoreV1().Nodes().List(e.t.Context(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(e.t.Context(), e.w.Client(), e.ns, "app="+name, 2*time.Minute, "all Ready",
		world.AllReady(len(nodes.Items))); err != nil {
		e.t.Fatal(err)
	}
}

// writeOrder records, by resourceVersion, when a pre-pull pod was first
// created on each node and when each app pod first carried an in-place
// upgrade's state.
type writeOrder struct {
	mu      sync.Mutex
	created map[string]int64 // node → resourceVersion
	patched map[string]int64 // pod → resourceVersion
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// order watches the pre-pull pods (those pulling an image of the test's
// namespace) and the app pods.
func (e *env) order(prepullNS, prepullSel, appSel string) *writeOrder {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	o := &writeOrder{created: map[string]int64{}, patched: map[string]int64{}, cancel: cancel}
	watchPods := func(ns, sel string, on func(watch.EventType, *corev1.Pod, int64)) {
		wi, err := e.w.Client().CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			e.t.Fatal(err)
		}
		o.done.Go(func() {
			defer wi.Stop()
			for ev := range wi.ResultChan() {
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				rv, _ := strconv.ParseInt(p.ResourceVersion, 10, 64)
				o.mu.Lock()
				on(ev.Type, p, rv)
				o.mu.Unlock()
			}
		})
	}
	watchPods(prepullNS, prepullSel, func(t watch.EventType, p *corev1.Pod, rv int64) {
		if _, seen := o.created[p.Spec.NodeName]; t == watch.Added && !seen && pulls(p, e.ns+"/") {
			o.created[p.Spec.NodeName] = rv
		}
	})
	watchPods(e.ns, appSel, func(_ watch.EventType, p *corev1.Pod, rv int64) {
		if _, seen := o.patched[p.Name]; !seen && p.Annotations[inplace.StateAnnotation] != "" {
			o.patched[p.Name] = rv
		}
	})
	return o
}

// stop ends the watches and returns the creations by node and the
// patches in order.
func (o *writeOrder) stop() (map[string]int64, []int64) {
	o.cancel()
	o.done.Wait()
	var patched []int64
	for _, rv := range o.patched {
		patched = append(patched, rv)
	}
	sort.Slice(patched, func(i, j int) bool { return patched[i] < patched[j] })
	return o.created, patched
}

// pulls reports whether a pre-pull pod pulls an image whose repository
// contains repo.
func pulls(p *corev1.Pod, repo string) bool {
	for _, c := range p.Spec.Containers {
		if strings.Contains(c.Image, repo) {
			return true
		}
	}
	return false
}
