package function

import (
	"net/http"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// TestComputeSpecOverHTTP runs the real compute-spec, built from the
// environment by Start (app.BuildKnative: informers on the test world's
// API server, rollout state in a real NATS KV bucket), under func-go's
// runtime, and posts it a real push: it answers with one upgrade.planned
// and sends the other to K_SINK.
func TestComputeSpecOverHTTP(t *testing.T) {
	w := world.Shared(t)
	ns, appNS := w.NewNamespace(t), w.NewNamespace(t)
	repo := appNS + "/shop"
	if _, err := w.Registry.Push(t.Context(), repo, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	deploy(t, w, appNS, "web", w.Registry.Host()+"/"+repo+":1.0.0", 3)
	sk := newSink(t)
	url := serve(t, New(), map[string]string{
		"INPLACE_KUBECONFIG": w.Cluster.Kubeconfig(), "INPLACE_NAMESPACE": ns, "INPLACE_FUNCTIONS": "compute-spec",
		"INPLACE_NATS_URL": bustest.Server(t).URL(), "INPLACE_REPLICAS": "1", "K_SINK": sk.srv.URL,
	})
	digest, err := w.Registry.Push(t.Context(), repo, "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	push := events.ImagePushedData{Registry: w.Registry.Host(), Repository: repo, Tag: "1.1.0", Digest: digest, Origin: "test"}
	in, err := events.New("push-1", events.ImagePushed, events.Source("test"), push.Ref(), push)
	if err != nil {
		t.Fatal(err)
	}

	resp := post(t, url, in, false)
	e, body := reply(t, resp)
	if resp.StatusCode != http.StatusOK || e == nil || e.Type() != events.UpgradePlanned {
		t.Fatalf("status %d, reply %v (%s); want 200 and an upgrade.planned", resp.StatusCode, e, body)
	}
	if got := sunk(sk, events.UpgradePlanned); len(got) != 1 || got[0] == e.ID() {
		t.Errorf("K_SINK got %v; want the other upgrade.planned of the wave of 2", got)
	}

	// The Broker delivers again (structured mode this time): the same
	// answer, by id, or none; never a second plan.
	resp = post(t, url, in, true)
	again, _ := reply(t, resp)
	if resp.StatusCode != http.StatusOK || (again != nil && again.ID() != e.ID()) {
		t.Errorf("redelivery: status %d, reply %v; want 200 and the same plan", resp.StatusCode, again)
	}

	bad := in.Clone()
	bad.SetID("push-bad")
	if err := bad.SetData(cloudevents.ApplicationJSON, map[string]string{"registry": push.Registry}); err != nil {
		t.Fatal(err)
	}
	if resp := post(t, url, bad, false); resp.StatusCode != StatusPermanent {
		t.Errorf("malformed push: status %d, want %d", resp.StatusCode, StatusPermanent)
	}
}

// sunk lists the ids of the events of typ K_SINK received.
func sunk(s *sink, typ string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, t := range s.types {
		if t == typ {
			out = append(out, id)
		}
	}
	return out
}

func deploy(t *testing.T, w *world.World, ns, name, image string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}},
	}
	if _, err := w.Client().AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := world.WaitPods(t.Context(), w.Client(), ns, "app="+name, 2*time.Minute, "all Ready", world.AllReady(int(replicas))); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyOpensGateOverHTTP: in Knative mode no pod watcher runs, so the
// verify service opens the readiness gate of a new pod when the
// ApiServerSource reports it; without that the pod never becomes Ready.
func TestVerifyOpensGateOverHTTP(t *testing.T) {
	w := world.Shared(t)
	ns, appNS := w.NewNamespace(t), w.NewNamespace(t)
	repo := appNS + "/tools"
	if _, err := w.Registry.Push(t.Context(), repo, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gated", Namespace: appNS},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: w.Registry.Host() + "/" + repo + ":1.0.0"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}},
	}
	if _, err := w.Client().CoreV1().Pods(appNS).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, err := world.WaitPod(t.Context(), w.Client(), appNS, "gated", 2*time.Minute, "containers ready",
		func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready
		})
	if err != nil {
		t.Fatal(err)
	}
	if world.PodReady(running) {
		t.Fatal("the pod is Ready before its gate opened")
	}
	url := serve(t, New(), map[string]string{
		"INPLACE_KUBECONFIG": w.Cluster.Kubeconfig(), "INPLACE_NAMESPACE": ns, "INPLACE_FUNCTIONS": "verify",
		"INPLACE_NATS_URL": bustest.Server(t).URL(), // rollout records, bound once compute-spec creates them
	})
	resp := post(t, url, apiServerSourceUpdate(t, running), true)
	if resp.StatusCode != http.StatusOK {
		_, body := reply(t, resp)
		t.Fatalf("status %d (%s)", resp.StatusCode, body)
	}
	if _, err := world.WaitPod(t.Context(), w.Client(), appNS, "gated", 2*time.Minute, "Ready", world.PodReady); err != nil {
		t.Fatal(err)
	}
}

// apiServerSourceUpdate is the event a Knative ApiServerSource in Resource
// mode sends about pod (knative.dev/eventing pkg/adapter/apiserver/events).
func apiServerSourceUpdate(t *testing.T, pod *corev1.Pod) cloudevents.Event {
	t.Helper()
	p := pod.DeepCopy()
	p.APIVersion, p.Kind = "v1", "Pod"
	e := cloudevents.NewEvent()
	e.SetID("4d1c4f58-6e1b-4b57-9e0f-2f2f5a3c1d11")
	e.SetType(events.APIServerSourceUpdate)
	e.SetSource("https://10.96.0.1:443")
	e.SetSubject("/apis/v1/namespaces/" + p.Namespace + "/pods/" + p.Name)
	e.SetExtension("kind", "Pod")
	if err := e.SetData(cloudevents.ApplicationJSON, p); err != nil {
		t.Fatal(err)
	}
	return e
}
