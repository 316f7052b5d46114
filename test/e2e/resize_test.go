package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/test/world"
)

// A CPU resize under resizePolicy NotRequired changes every pod's
// resources in place without a restart: same UID, IP and node, same
// containerID and restartCount; the spec and the container status both
// show the new CPU; the request succeeds.
func TestResizeCPUWithoutRestart(t *testing.T) {
	e := newEnv(t)
	skipResizeOnHollow(t, e)
	e.deploySized("sized", 2, "100m")
	before := map[string]podState{}
	for _, p := range e.podList("sized") {
		before[p.Name] = stateOf(p)
	}

	e.requestResize("Deployment", "sized", "200m", "app")
	ev, res := e.waitResizeResult("sized", 2*time.Minute)
	if ev.Type() != events.ContainerResizeSucceeded || res.Counts.Succeeded != 2 {
		t.Fatalf("result %s %+v; want succeeded, 2 pods", ev.Type(), res)
	}
	if res.Template != events.TemplateSynced {
		t.Errorf("result template %q; want %s", res.Template, events.TemplateSynced)
	}
	rsBefore := e.activeReplicaSets("sized")
	want := cpu("200m")
	e.checkResizedInPlace("sized", before, want)
	// The template follows, without a rollout: the Deployment and its one
	// ReplicaSet ask the new CPU, no new ReplicaSet, no pod replaced.
	d, err := e.w.Client().AppsV1().Deployments(e.ns).Get(t.Context(), "sized", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Resources; !resize.Equal(&got, &want) {
		t.Errorf("Deployment template asks %s; want %s", resize.String(got), resize.String(want))
	}
	if d.Spec.Paused {
		t.Error("the Deployment is left paused")
	}
	rsAfter := e.activeReplicaSets("sized")
	if len(rsAfter) != 1 || len(rsBefore) != 1 || rsAfter[0].Name != rsBefore[0].Name {
		t.Fatalf("ReplicaSets %v → %v; want the one it had", names(rsBefore), names(rsAfter))
	}
	if got := rsAfter[0].Spec.Template.Spec.Containers[0].Resources; !resize.Equal(&got, &want) {
		t.Errorf("ReplicaSet template asks %s; want %s", resize.String(got), resize.String(want))
	}
	if err := world.Eventually(t.Context(), time.Minute, "Deployment counts 2 updated pods", func(ctx context.Context) (bool, error) {
		d, err := e.w.Client().AppsV1().Deployments(e.ns).Get(ctx, "sized", metav1.GetOptions{})
		return err == nil && d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == 2 && d.Status.Replicas == 2, err
	}); err != nil {
		t.Error(err)
	}
	for _, p := range e.podList("sized") {
		if _, ok := before[p.Name]; !ok {
			t.Errorf("pod %s is new after the template sync", p.Name)
		}
	}
}

func (e *env) activeReplicaSets(app string) []appsv1.ReplicaSet {
	e.t.Helper()
	list, err := e.w.Client().AppsV1().ReplicaSets(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if rs.Spec.Replicas == nil || *rs.Spec.Replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func names(rss []appsv1.ReplicaSet) []string {
	var out []string
	for _, rs := range rss {
		out = append(out, rs.Name)
	}
	return out
}

// More CPU than the node has: the kubelet answers Infeasible, the pod is
// resized back to what it asked, nothing restarted, and the request fails
// with the kubelet's reason.
func TestResizeInfeasibleRollsBack(t *testing.T) {
	e := newEnv(t)
	skipResizeOnHollow(t, e)
	e.deploySized("huge", 1, "100m")
	before := stateOf(e.onlyPod("huge"))

	e.requestResize("Deployment", "huge", "1000", "app")
	ev, res := e.waitResizeResult("huge", 3*time.Minute)
	if ev.Type() != events.ContainerResizeFailed || res.Counts.RolledBack != 1 {
		t.Fatalf("result %s %+v; want failed, 1 pod resized back", ev.Type(), res)
	}
	if res.Reason != corev1.PodReasonInfeasible || !strings.Contains(res.Message, "Node didn't have enough") {
		t.Errorf("result reason %q message %q; want the kubelet's Infeasible", res.Reason, res.Message)
	}
	pod := e.onlyPod("huge")
	after := stateOf(pod)
	if after.UID != before.UID || after.Containers["app"].ID != before.Containers["app"].ID ||
		after.Containers["app"].Restarts != before.Containers["app"].Restarts {
		t.Errorf("pod changed: %+v → %+v", before, after)
	}
	want := cpu("100m")
	if got := pod.Spec.Containers[0].Resources; !resize.Equal(&got, &want) {
		t.Errorf("spec asks %s after the rollback; want %s back", resize.String(got), resize.String(want))
	}
	if evs := e.eventsOnceThere(pod.Name, "InPlaceResizeFailed")["InPlaceResizeFailed"]; len(evs) != 1 || !strings.Contains(evs[0], "undone") {
		t.Errorf("InPlaceResizeFailed Events %q; want one saying it was undone", evs)
	}
}

func skipResizeOnHollow(t *testing.T, e *env) {
	t.Helper()
	if e.w.Mode == world.NodesHollow {
		t.Skip("hollow nodes: kubemark's stub container manager gives the kubelet's resize admission 0 allocatable " +
			"(GetNodeAllocatableAbsolute), so every CPU resize is Infeasible (\"capacity: 0\"); with that stub answering the " +
			"machine's capacity, the kubelet then fails to actuate it (PodResizeInProgress Error: \"unable to get pod cgroup " +
			"memory config\": the stub has no pod cgroups)")
	}
}

func cpu(q string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
}

// deploySized creates an opted-in Deployment (max-unavailable 1) of one
// container app asking cpu, resizable without a restart, and waits until
// its pods are Ready.
func (e *env) deploySized(name string, replicas int32, cpuRequest string) {
	e.t.Helper()
	e.push("shop", "1.0.0")
	e.createSized("Deployment", name, replicas, cpuRequest, e.ref("shop", "1.0.0"))
}

func (e *env) podList(app string) []*corev1.Pod {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out
}

// requestResize publishes container.resize.requested, as any producer may.
func (e *env) requestResize(kind, name, cpu string, containers ...string) {
	e.t.Helper()
	d := events.ResizeRequestData{Target: events.ObjectRef{Kind: kind, Namespace: e.ns, Name: name},
		Containers: containers, CPU: cpu, Reason: "test"}
	id := events.DeriveID("test/"+e.ns+"/"+name, events.ContainerResizeRequested, time.Now().String())
	ev, err := events.New(id, events.ContainerResizeRequested, events.Source("test"), d.Target.String(), d)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.Bus.Publish(e.t.Context(), ev); err != nil {
		e.t.Fatal(err)
	}
}

// waitResizeResult waits for container.resize.succeeded or .failed of the
// workload and returns it.
func (e *env) waitResizeResult(name string, within time.Duration) (cloudevents.Event, events.ResizeResultData) {
	e.t.Helper()
	var found cloudevents.Event
	var data events.ResizeResultData
	err := world.Eventually(e.t.Context(), within, "resize result of "+name, func(context.Context) (bool, error) {
		for _, ev := range e.stream(events.ContainerResizeSucceeded, events.ContainerResizeFailed) {
			d, err := events.As[events.ResizeResultData](ev)
			if err == nil && d.Target.Name == name && d.Target.Namespace == e.ns {
				found, data = ev, d
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("%v; stream types: %v", err, e.types())
	}
	return found, data
}
