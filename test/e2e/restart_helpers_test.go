package e2e_test

import (
	"context"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// deployTwo creates a one-replica (or more) Deployment of two containers,
// app and sidecar, opted in, and waits until its pods are Ready.
func (e *env) deployTwo(name string, replicas int32, gate bool, annotations map[string]string) {
	e.t.Helper()
	e.push("shop", "1.0.0")
	e.push("side", "1.0.0")
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Image: e.ref("shop", "1.0.0")}, {Name: "sidecar", Image: e.ref("side", "1.0.0")}}}
	if gate {
		spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
	}
	ann := map[string]string{"inplace.dev/policy": "digest"}
	for k, v := range annotations {
		ann[k] = v
		if v == "" {
			delete(ann, k) // "" takes an annotation away
		}
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Annotations: ann},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}
	if _, err := e.w.Client().AppsV1().Deployments(e.ns).Create(e.t.Context(), d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(e.t.Context(), e.w.Client(), e.ns, "app="+name, 2*time.Minute, "all Ready",
		world.AllReady(int(replicas))); err != nil {
		e.t.Fatal(err)
	}
}

// requestRestart publishes container.restart.requested, as any producer may.
func (e *env) requestRestart(kind, name string, s events.RestartStrategy, containers ...string) {
	e.t.Helper()
	d := events.RestartRequestData{Target: events.ObjectRef{Kind: kind, Namespace: e.ns, Name: name},
		Containers: containers, Strategy: s, Reason: "test"}
	id := events.DeriveID("test/"+e.ns+"/"+name, events.ContainerRestartRequested, time.Now().String())
	ev, err := events.New(id, events.ContainerRestartRequested, events.Source("test"), d.Target.String(), d)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.Bus.Publish(e.t.Context(), ev); err != nil {
		e.t.Fatal(err)
	}
}

// waitRestartResult waits for container.restart.succeeded or .failed of
// the workload and returns it.
func (e *env) waitRestartResult(name string, within time.Duration) (cloudevents.Event, events.RestartResultData) {
	e.t.Helper()
	var found cloudevents.Event
	err := world.Eventually(e.t.Context(), within, "restart result of "+name, func(context.Context) (bool, error) {
		for _, ev := range e.stream(events.ContainerRestartSucceeded, events.ContainerRestartFailed) {
			d, err := events.As[events.RestartResultData](ev)
			if err == nil && d.Target.Name == name && d.Target.Namespace == e.ns {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("%v; stream types: %v", err, e.types())
	}
	d, err := events.As[events.RestartResultData](found)
	if err != nil {
		e.t.Fatal(err)
	}
	return found, d
}

// container is what a restart must change (containerID, restartCount) and
// must not (digest), per container.
type container struct {
	ID, Digest, Image string
	Restarts          int32
	StartedAt         time.Time
}

type podState struct {
	UID                 string
	Node, IP            string
	Containers          map[string]container
	Annotations         map[string]string
	GateFalseAt, Patchd time.Time
}

func (e *env) onlyPod(app string) *corev1.Pod {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(list.Items) != 1 {
		e.t.Fatalf("%d pods of %s; want 1", len(list.Items), app)
	}
	return &list.Items[0]
}

func stateOf(p *corev1.Pod) podState {
	s := podState{UID: string(p.UID), Node: p.Spec.NodeName, IP: p.Status.PodIP, Containers: map[string]container{},
		Annotations: p.Annotations}
	for _, c := range p.Spec.Containers {
		cs := world.ContainerStatus(p, c.Name)
		if cs == nil {
			continue
		}
		ct := container{ID: cs.ContainerID, Digest: imageref.DigestOf(cs.ImageID), Image: c.Image, Restarts: cs.RestartCount}
		if cs.State.Running != nil {
			ct.StartedAt = cs.State.Running.StartedAt.Time
		}
		s.Containers[c.Name] = ct
	}
	return s
}

// specLog records, from a watch, the order in which the pods' container
// images and restart counts changed.
type specLog struct {
	mu   sync.Mutex
	seen []map[string]container
}

func (e *env) watchContainers(app string) *specLog {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	w, err := e.w.Client().CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	l := &specLog{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				l.mu.Lock()
				l.seen = append(l.seen, stateOf(pod).Containers)
				l.mu.Unlock()
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	return l
}

func (l *specLog) all() []map[string]container {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]container(nil), l.seen...)
}

func mustRestartedOnce(t *testing.T, name string, before, after container) {
	t.Helper()
	if after.Restarts != before.Restarts+1 {
		t.Errorf("container %s: restartCount %d → %d; want +1", name, before.Restarts, after.Restarts)
	}
	if after.ID == before.ID {
		t.Errorf("container %s: containerID unchanged (%s): not restarted", name, after.ID)
	}
	if after.Digest != before.Digest || after.Digest == "" {
		t.Errorf("container %s: running digest %s → %s; a restart keeps the bytes", name, before.Digest, after.Digest)
	}
}
