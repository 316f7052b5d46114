package e2e_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/traffic"
	"github.com/inplace-dev/inplace/test/world"
)

// An in-place rollout with the readiness gate loses no request: while the
// traffic probe, a pod of the world, sends requests at a steady rate to a
// ClusterIP Service by its DNS name (CoreDNS, kube-proxy), every pod of
// the Deployment behind it moves to the new version, and not one request
// fails; the versions answered move from the old one to the new one.
func TestRolloutBehindAServiceLosesNoRequest(t *testing.T) {
	e := newEnv(t)
	requireRealNodes(t, e, "the traffic probe and the app it calls are programs that only real nodes run")
	loseNoRequest(t, e, drainAfterSIGTERM)
}

// The same with pods that drain in a preStop hook (a 3 s sleep) and stop
// serving at SIGTERM: patch-pod patches each pod right after its gate goes
// False, not once it left the EndpointSlice (its Event says so), and not
// one request fails.
func TestRolloutOfPreStopPodsLosesNoRequest(t *testing.T) {
	e := newEnv(t)
	requireRealNodes(t, e, "the traffic probe and the app it calls are programs that only real nodes run")
	loseNoRequest(t, e, drainInPreStop)
	events, err := e.w.Client().CoreV1().Events(e.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := 0
	for _, ev := range events.Items {
		if strings.Contains(ev.Message, "patching now: the kubelet stops the restarted containers only after their preStop hooks") {
			now++
		}
	}
	if now != 4 {
		t.Errorf("%d pods patched right after their gate went False, want 4", now)
	}
}

// loseNoRequest rolls a Deployment of 4 pods behind a Service to a new
// version while the traffic probe calls it, and checks that no request
// failed, from the moment the Service answered steadily (Probe.Steady) to
// the end, and the versions answered moved from the old to the new.
func loseNoRequest(t *testing.T, e *env, drain func(*corev1.Container)) {
	const n = 4
	e.push("web", "1.0.0")
	e.service("web")
	e.deployServing("web", n, e.ref("web", "1.0.0"), drain)
	e.waitReadyEndpoints("web", n)

	p, err := traffic.Start(t.Context(), e.w.Client(), e.ns, "http://web."+e.ns+".svc.cluster.local/", traffic.Options{Registry: e.w.Registry})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := traffic.Record(t.Context(), e.w.Client(), e.ns, "app=web")
	if err != nil {
		t.Fatal(err)
	}
	open, err := p.Steady(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if open.Failed != 0 {
		t.Logf("before the Service answered steadily (not counted): %d of %d requests failed: %+v", open.Failed, open.Sent, open.Samples)
	}
	before, err := p.Wait(t.Context(), time.Minute, "100 answers of 1.0.0", func(c traffic.Counts) bool { return c.Versions["1.0.0"] >= 100 })
	if err != nil {
		t.Fatal(err)
	}
	digest := e.push("web", "1.1.0")
	e.waitAllOn("web", n, digest, 4*time.Minute)
	e.waitReadyEndpoints("web", n)
	moved, err := p.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(t.Context(), time.Minute, "100 more answers of 1.1.0", func(c traffic.Counts) bool {
		return c.Versions["1.1.0"] >= moved.Versions["1.1.0"]+100
	}); err != nil {
		t.Fatal(err)
	}
	final, err := p.Stop(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("traffic: before the push %+v; once every pod ran 1.1.0 %+v; at the end %+v", before.Versions, moved.Versions, final.Versions)
	if w := final.Sub(open); w.Failed != 0 {
		t.Errorf("%d of %d requests failed (refused %d, reset %d, timeout %d, 5xx %d, other %d); latest: %+v%s",
			w.Failed, w.Sent, w.Refused, w.Reset, w.Timeout, w.ServerError, w.Other, w.Samples,
			rec.Explain(t.Context(), w.Samples, 6*time.Second, 2*time.Second, e.w.NodeLogs()...))
	}
	if len(before.Versions) != 1 {
		t.Errorf("versions answered before the push %v; want 1.0.0 only", before.Versions)
	}
	if final.Versions["1.0.0"] != moved.Versions["1.0.0"] {
		t.Errorf("1.0.0 answered %d times after every pod ran 1.1.0", final.Versions["1.0.0"]-moved.Versions["1.0.0"])
	}
	if final.Versions["1.1.0"] < moved.Versions["1.1.0"]+100 || len(final.Versions) != 2 {
		t.Errorf("versions answered %v; want 1.0.0 then 1.1.0 only", final.Versions)
	}
}

// requireRealNodes skips the test unless the world's nodes are real, saying why.
func requireRealNodes(t *testing.T, e *env, why string) {
	t.Helper()
	if !e.w.IsReal() {
		t.Skipf("%s nodes: %s (INPLACE_NODES=%s)", e.w.Mode, why, world.NodesReal)
	}
}

// drainAfterSIGTERM: the app serves on for 3 s after SIGTERM while
// kube-proxy takes it out of the Service. kube-proxy syncs its rules at
// most once a second and often programs a pod's removal about a second
// after its EndpointSlice, after SIGTERM (test/analysis's stopDelay says
// how that was measured): 3 s leaves a margin of about 2 s on a busy
// machine.
func drainAfterSIGTERM(c *corev1.Container) {
	c.Env = append(c.Env, corev1.EnvVar{Name: settings.AppPrefix + settings.StopDelayVar, Value: "3s"})
}

// drainInPreStop: the app serves through a 3 s preStop sleep hook, then
// stops at SIGTERM; the hook covers kube-proxy's lag as the stop delay
// above does.
func drainInPreStop(c *corev1.Container) {
	c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 3}}}
}

// deployServing creates an opted-in Deployment (semver:minor, the
// readiness gate, max-unavailable 1) of the app serving on 8080 the way a
// service's pods do: Ready once /readyz answers, and draining as drain
// says when it is stopped.
func (e *env) deployServing(name string, replicas int32, image string, drain func(*corev1.Container)) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	probe := &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}}
	c := corev1.Container{Name: "app", Image: image, ReadinessProbe: probe}
	drain(&c)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns,
			Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers:     []corev1.Container{c},
				ReadinessGates: []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}}}},
	}
	if _, err := e.w.Client().AppsV1().Deployments(e.ns).Create(e.t.Context(), d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(e.t.Context(), e.w.Client(), e.ns, "app="+name, 2*time.Minute, "all Ready",
		world.AllReady(int(replicas))); err != nil {
		e.t.Fatal(err)
	}
}
