package e2e_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/world"
)

// Restarting one container of a two-container pod bumps only that
// container's restartCount, by one: same pod (UID, IP, node), same running
// digest; the template keeps its reference; the pod says it was planned.
// A second request switches the reference back and restarts it again.
func TestRestartOneContainerOfTwo(t *testing.T) {
	e := newEnv(t)
	e.deployTwo("web", 1, false, nil)
	before := stateOf(e.onlyPod("web"))

	e.requestRestart("Deployment", "web", events.RestartStrategy{}, "app")
	ev, res := e.waitRestartResult("web", 2*time.Minute)
	if ev.Type() != events.ContainerRestartSucceeded || res.Counts.Succeeded != 1 {
		t.Fatalf("result %s %+v; want succeeded, 1 pod", ev.Type(), res)
	}
	pod := e.onlyPod("web")
	after := stateOf(pod)
	if after.UID != before.UID || after.IP != before.IP || after.Node != before.Node {
		t.Errorf("pod changed: %+v → %+v", before, after)
	}
	mustRestartedOnce(t, "app", before.Containers["app"], after.Containers["app"])
	if s, a := before.Containers["sidecar"], after.Containers["sidecar"]; s != a {
		t.Errorf("sidecar changed: %+v → %+v", s, a)
	}
	if after.Containers["app"].Image == before.Containers["app"].Image {
		t.Errorf("app image reference unchanged (%s): the kubelet had nothing to restart for", after.Containers["app"].Image)
	}
	if after.Annotations[inplace.RestartedAtAnnotation] == "" || !strings.Contains(after.Annotations[inplace.RestartReasonAnnotation], "app") {
		t.Errorf("planned-restart annotations: %v", after.Annotations)
	}
	d, err := e.w.Client().AppsV1().Deployments(e.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Spec.Template.Spec.Containers[0].Image, e.ref("shop", "1.0.0"); got != want {
		t.Errorf("template image %s; want it left at %s", got, want)
	}
	if evs := e.eventsOnceThere(pod.Name, "InPlaceRestart")["InPlaceRestart"]; len(evs) != 1 {
		t.Errorf("InPlaceRestart Events %q; want one", evs)
	}
	series := `inplace_planned_restarts_total{container="app",namespace="` + e.ns + `",pod="` + pod.Name + `"}`
	if got := e.counter(series); got != 1 {
		t.Errorf("%s = %v; want 1", series, got)
	}
	if got := e.counter(strings.Replace(series, `"app"`, `"sidecar"`, 1)); got != 0 {
		t.Errorf("sidecar counted as restarted: %v", got)
	}

	// Again: the reference is switched once more, the bytes still the same.
	e.requestRestart("Deployment", "web", events.RestartStrategy{}, "app")
	e.waitRestarts("web", "app", before.Containers["app"].Restarts+2)
	again := stateOf(e.onlyPod("web"))
	mustRestartedOnce(t, "app", after.Containers["app"], again.Containers["app"])
	if again.Containers["app"].Image == after.Containers["app"].Image {
		t.Errorf("second restart left the reference %s", again.Containers["app"].Image)
	}
}

// A workload that does not opt in is not restarted: the request is dead-lettered.
func TestRestartRefusedWithoutOptIn(t *testing.T) {
	e := newEnv(t)
	e.deployTwo("plain", 1, false, map[string]string{"inplace.dev/policy": ""})
	before := stateOf(e.onlyPod("plain"))
	e.requestRestart("Deployment", "plain", events.RestartStrategy{}, "app")
	e.waitDeadLetter("compute-spec", "not opted in", time.Minute)
	if after := stateOf(e.onlyPod("plain")); after.Containers["app"] != before.Containers["app"] {
		t.Errorf("app changed without an opt-in: %+v → %+v", before.Containers["app"], after.Containers["app"])
	}
}

// orderedRecreate: the sidecar is switched only after app is back.
func TestRestartOrdered(t *testing.T) {
	e := newEnv(t)
	e.deployTwo("ord", 1, false, nil)
	before := stateOf(e.onlyPod("ord"))
	log := e.watchContainers("ord")
	e.requestRestart("Deployment", "ord", events.RestartStrategy{OrderedRecreate: true}, "app", "sidecar")
	if ev, res := e.waitRestartResult("ord", 2*time.Minute); ev.Type() != events.ContainerRestartSucceeded {
		t.Fatalf("result %s %+v", ev.Type(), res)
	}
	after := stateOf(e.onlyPod("ord"))
	mustRestartedOnce(t, "app", before.Containers["app"], after.Containers["app"])
	mustRestartedOnce(t, "sidecar", before.Containers["sidecar"], after.Containers["sidecar"])
	// The first version of the pod whose sidecar spec changed must show
	// app already restarted, running.
	for _, seen := range log.all() {
		if seen["sidecar"].Image == before.Containers["sidecar"].Image {
			continue
		}
		if app := seen["app"]; app.Restarts != before.Containers["app"].Restarts+1 || app.StartedAt.IsZero() {
			t.Errorf("sidecar switched while app was %+v; want app restarted and running first", app)
		}
		return
	}
	t.Error("never saw the sidecar switched")
}

// unreadyGracePeriodSeconds: the readiness gate is False at least the
// grace before the restart's patch.
func TestRestartUnreadyGrace(t *testing.T) {
	e := newEnv(t)
	e.deployTwo("grace", 1, true, nil)
	gateFalseAt := e.gateWatch("grace")
	const grace = 3
	e.requestRestart("Deployment", "grace", events.RestartStrategy{UnreadyGracePeriodSeconds: grace}, "app")
	if ev, _ := e.waitRestartResult("grace", 2*time.Minute); ev.Type() != events.ContainerRestartSucceeded {
		t.Fatalf("result %s", ev.Type())
	}
	pod := e.onlyPod("grace")
	st, err := inplace.ParseState(pod)
	if err != nil || st == nil {
		t.Fatalf("state: %v %v", st, err)
	}
	falseAt := gateFalseAt()
	if falseAt.IsZero() {
		t.Fatal("the gate never went False")
	}
	// lastTransitionTime has second precision (rounded down): the interval
	// measured is at least the real one.
	if gap := st.PatchedAt.Sub(falseAt); gap < grace*time.Second {
		t.Errorf("restart patched %s after the gate went False; want at least %ds", gap, grace)
	}
}

// minStartedSeconds: the request succeeds only once the restarted
// container has been started that long.
func TestRestartMinStarted(t *testing.T) {
	e := newEnv(t)
	e.deployTwo("minstart", 1, false, nil)
	const minStarted = 4
	e.requestRestart("Deployment", "minstart", events.RestartStrategy{MinStartedSeconds: minStarted}, "app")
	ev, _ := e.waitRestartResult("minstart", 2*time.Minute)
	if ev.Type() != events.ContainerRestartSucceeded {
		t.Fatalf("result %s", ev.Type())
	}
	started := stateOf(e.onlyPod("minstart")).Containers["app"].StartedAt
	if gap := ev.Time().Sub(started); gap < minStarted*time.Second {
		t.Errorf("succeeded %s after the container started; want at least %ds", gap, minStarted)
	}
}

// failurePolicy Fail: a container that crashes after its restart fails the
// request (nothing to roll back: the bytes are the same).
func TestRestartCrashFails(t *testing.T) {
	e := newEnv(t)
	if e.w.Mode != world.NodesSimulated {
		t.Skipf("%s nodes: the fault (a container that crashes when started again from the same image) is injected "+
			"through the simulated kubelet only", e.w.Mode)
	}
	e.deployTwo("crash", 1, false, nil)
	pod := e.onlyPod("crash")
	patch := `{"metadata":{"annotations":{"` + kubelet.CrashOnStartAnnotation + `":"app"}}}`
	if _, err := e.w.Client().CoreV1().Pods(e.ns).Patch(t.Context(), pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.requestRestart("Deployment", "crash", events.RestartStrategy{FailurePolicy: events.FailurePolicyFail, MinStartedSeconds: 2}, "app")
	ev, res := e.waitRestartResult("crash", 2*time.Minute)
	if ev.Type() != events.ContainerRestartFailed || res.Counts.Failed != 1 {
		t.Fatalf("result %s %+v; want failed, 1 pod failed", ev.Type(), res)
	}
	if !strings.Contains(res.Reason+res.Message, "CrashLoopBackOff") {
		t.Errorf("reason %q %q; want the crash", res.Reason, res.Message)
	}
	evs := e.eventsOnceThere(pod.Name, "InPlaceRestartFailed")
	if len(evs["InPlaceRestartFailed"]) != 1 || len(evs["InPlaceRollback"]) != 0 {
		t.Errorf("InPlaceRestartFailed Events %q, InPlaceRollback %q; want one failure and no rollback", evs["InPlaceRestartFailed"], evs["InPlaceRollback"])
	}
}

// podEvents are all Events on pod, by reason.
func (e *env) podEvents(pod string) map[string][]string { return e.kubeletEvents(pod) }

// gateWatch records the lastTransitionTime of the inplace.dev/ready
// condition each time a pod of app shows it False.
func (e *env) gateWatch(app string) func() time.Time {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	w, err := e.w.Client().CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	var mu sync.Mutex
	var at time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			for _, c := range pod.Status.Conditions {
				if string(c.Type) == inplace.ReadinessGate && c.Status == corev1.ConditionFalse {
					mu.Lock()
					at = c.LastTransitionTime.Time
					mu.Unlock()
				}
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	return func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
}

// waitRestarts waits until container name of app's only pod has restarted n times and runs.
func (e *env) waitRestarts(app, name string, n int32) {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), 2*time.Minute, app+" restarts", func(context.Context) (bool, error) {
		c := stateOf(e.onlyPod(app)).Containers[name]
		return c.Restarts >= n && !c.StartedAt.IsZero(), nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// waitDeadLetter waits for a dead letter of function whose reason contains sub.
func (e *env) waitDeadLetter(function, sub string, within time.Duration) {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), within, "dead letter "+sub, func(context.Context) (bool, error) {
		for _, why := range e.deadLetters(function) {
			if strings.Contains(why, sub) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("%v: %v", err, e.deadLetters(function))
	}
}

// A restart requested while the pod's containers are not running yet (as
// compute-spec's cache shows them: on a busy machine the request can
// overtake the pod's watch event) waits for them to run, then restarts:
// the request is neither refused nor lost.
func TestRestartWaitsForStartingContainers(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	e.push("side", "1.0.0")
	labels := map[string]string{"app": "starting"}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "starting", Namespace: e.ns, Annotations: map[string]string{"inplace.dev/policy": "digest"}},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "app", Image: e.ref("shop", "1.0.0")}, {Name: "sidecar", Image: e.ref("side", "1.0.0")}}}}},
	}
	if _, err := e.w.Client().AppsV1().Deployments(e.ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := world.WaitPods(t.Context(), e.w.Client(), e.ns, "app=starting", time.Minute, "a pod", func(ps []corev1.Pod) bool {
		return len(ps) == 1 && ps[0].Spec.NodeName != ""
	}); err != nil {
		t.Fatal(err)
	}
	e.requestRestart("Deployment", "starting", events.RestartStrategy{}, "app")
	ev, res := e.waitRestartResult("starting", 2*time.Minute)
	if ev.Type() != events.ContainerRestartSucceeded || res.Counts.Succeeded != 1 {
		t.Fatalf("result %s %+v; want succeeded, 1 pod (dead letters: %v)", ev.Type(), res, e.deadLetters("compute-spec"))
	}
	if app := stateOf(e.onlyPod("starting")).Containers["app"]; app.Restarts != 1 {
		t.Errorf("app restartCount %d; want 1", app.Restarts)
	}
}
