package e2e_test

import (
	"context"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// TestMain runs the suite on 3 nodes whatever runs them (real nodes
// default to 2): the tests' node counts, and the Events kubectl shows in
// docs/workloads.md (a DaemonSet's pods), are those of 3 nodes.
func TestMain(m *testing.M) {
	world.Main(m, world.Options{KubeletOptions: kubelet.Options{Nodes: 3}})
}

// env is one test: the shared world, a namespace, and inplace running on it.
type env struct {
	t  *testing.T
	w  *world.World
	ns string
	s  *stack.Stack
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the process's configuration changed by process.
func newEnvWith(t *testing.T, process func(*config.Process)) *env {
	t.Helper()
	w := world.Shared(t)
	level := slog.LevelWarn
	if os.Getenv("E2E_DEBUG") != "" {
		level = slog.LevelDebug
	}
	s, err := stack.Start(t.Context(), w, stack.Options{Dir: t.TempDir(), Process: process,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return &env{t: t, w: w, ns: w.NewNamespace(t), s: s}
}

// ref is the registry reference of repo:tag in the test's namespace.
func (e *env) ref(repo, tag string) string {
	return e.w.Registry.Host() + "/" + e.ns + "/" + repo + ":" + tag
}

// push pushes repo:tag (a real push: the registry notifies the receiver).
func (e *env) push(repo, tag string, opts ...registryOpt) string {
	e.t.Helper()
	d, err := e.w.Registry.Push(e.t.Context(), e.ns+"/"+repo, tag, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

type workload struct {
	name        string
	replicas    int32
	image       string
	gate        bool
	minReady    int32
	annotations map[string]string
	// labels are the Deployment's own (its pods carry app=<name>).
	labels map[string]string
	// statefulSet makes it a StatefulSet (RollingUpdate, pods started in
	// parallel) instead of a Deployment.
	statefulSet bool
}

// deploy creates a Deployment (or StatefulSet) and waits until its pods
// are Ready.
func (e *env) deploy(wl workload) {
	e.t.Helper()
	labels := map[string]string{"app": wl.name}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: wl.image}}}
	if wl.gate {
		spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
	}
	meta := metav1.ObjectMeta{Name: wl.name, Namespace: e.ns, Annotations: wl.annotations, Labels: wl.labels}
	sel, tmpl := &metav1.LabelSelector{MatchLabels: labels}, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
	var err error
	if wl.statefulSet {
		_, err = e.w.Client().AppsV1().StatefulSets(e.ns).Create(e.t.Context(), &appsv1.StatefulSet{ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Replicas: &wl.replicas, MinReadySeconds: wl.minReady, Selector: sel, Template: tmpl,
				PodManagementPolicy: appsv1.ParallelPodManagement}}, metav1.CreateOptions{})
	} else {
		_, err = e.w.Client().AppsV1().Deployments(e.ns).Create(e.t.Context(), &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &wl.replicas, MinReadySeconds: wl.minReady, Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(e.t.Context(), e.w.Client(), e.ns, "app="+wl.name, 2*time.Minute, "all Ready",
		world.AllReady(int(wl.replicas))); err != nil {
		e.t.Fatal(err)
	}
}

// podInfo is what must not change about a pod upgraded in place, and what must.
type podInfo struct {
	UID          types.UID
	Node, IP     string
	Image        string
	ImageID      string
	RestartCount int32
	Ready        bool
}

func (e *env) pods(app string) map[string]podInfo {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]podInfo{}
	for _, p := range list.Items {
		info := podInfo{UID: p.UID, Node: p.Spec.NodeName, IP: p.Status.PodIP, Image: p.Spec.Containers[0].Image, Ready: world.PodReady(&p)}
		if cs := world.ContainerStatus(&p, "app"); cs != nil {
			info.ImageID, info.RestartCount = cs.ImageID, cs.RestartCount
		}
		out[p.Name] = info
	}
	return out
}

// waitAllOn waits until n pods of app run digest and are Ready.
func (e *env) waitAllOn(app string, n int, digest string, within time.Duration) {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), within, app+" on "+digest[:19], func(context.Context) (bool, error) {
		pods := e.pods(app)
		if len(pods) != n {
			return false, nil
		}
		for _, p := range pods {
			if imageref.DigestOf(p.ImageID) != digest || !p.Ready {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("%v\npods: %+v\n%s", err, e.pods(app), e.dump(app))
	}
}

// stream returns every event on the stream so far whose type is in types
// (all when none), in stream order.
func (e *env) stream(types ...string) []cloudevents.Event {
	e.t.Helper()
	b := e.s.Bus
	cfg := jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: 10 * time.Second}
	for _, t := range types {
		cfg.FilterSubjects = append(cfg.FilterSubjects, b.Config().Subject(t))
	}
	ctx := e.t.Context()
	c, err := b.JetStream().CreateConsumer(ctx, b.Config().Stream, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = b.JetStream().DeleteConsumer(ctx, b.Config().Stream, c.CachedInfo().Name) }()
	var out []cloudevents.Event
	for {
		batch, err := c.FetchNoWait(500)
		if err != nil {
			e.t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			ev, err := bus.Decode(e.t.Context(), m.Subject(), m.Headers(), m.Data())
			if err != nil {
				e.t.Fatal(err)
			}
			out = append(out, ev)
		}
		if n == 0 {
			return out
		}
	}
}

// waitEvent waits for an event of typ whose subject contains sub.
func (e *env) waitEvent(typ, sub string, within time.Duration) cloudevents.Event {
	e.t.Helper()
	var found cloudevents.Event
	err := world.Eventually(e.t.Context(), within, typ+" "+sub, func(context.Context) (bool, error) {
		for _, ev := range e.stream(typ) {
			if strings.Contains(ev.Subject(), sub) {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("%v; stream types: %v", err, e.types())
	}
	return found
}

// types summarises the stream: count per event type.
func (e *env) types() map[string]int {
	out := map[string]int{}
	for _, ev := range e.stream() {
		out[ev.Type()]++
	}
	return out
}

// eventsOnceThere returns the Events on obj (by reason) once one of reason
// is there, or after 30 s: a function's Events go through their own client
// and budget, so they may reach the API server after the bus event a test
// waited for.
func (e *env) eventsOnceThere(obj, reason string) map[string][]string {
	e.t.Helper()
	var evs map[string][]string
	_ = world.Eventually(e.t.Context(), 30*time.Second, reason+" on "+obj, func(context.Context) (bool, error) {
		evs = e.kubeletEvents(obj)
		return len(evs[reason]) > 0, nil
	})
	return evs
}

// kubeletEvents returns the kubelet's Events on pod, by reason, in time order.
func (e *env) kubeletEvents(pod string) map[string][]string {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Events(e.ns).List(e.t.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].LastTimestamp.Before(&list.Items[j].LastTimestamp) })
	out := map[string][]string{}
	for _, ev := range list.Items {
		out[ev.Reason] = append(out[ev.Reason], ev.Message)
	}
	return out
}
