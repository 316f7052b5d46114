package manifests_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

// chain is the four functions, each built by the Knative build path
// (app.BuildKnative) with a kubeconfig of its own ServiceAccount.
type chain struct {
	fns   map[string]runner.Function // by function name
	cache *kube.Cache                // compute-spec's
}

// buildChain builds each function as its Knative Service would: only its
// own name in --functions, its own identity, config-inplace in ns.
func buildChain(t *testing.T, ids map[string]identity, ns string, nats securedNATS) *chain {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := &chain{fns: map[string]runner.Function{}}
	for _, name := range app.KnativeFunctions {
		var p config.Process
		if err := config.BindFlags(pflag.NewFlagSet(name, pflag.ContinueOnError), &p); err != nil {
			t.Fatal(err)
		}
		p.Kubeconfig, p.Namespace, p.Functions, p.NATSURL = ids[name].kubeconfig, ns, []string{name}, nats.url
		p.NATSCredentials = nats.credentials // each function connects to NATS as itself too
		p.Bus, p.WatchPods = bustest.Config(), false
		ctx, cancel := context.WithCancel(context.Background())
		a, closeApp, err := app.BuildKnative(ctx, &p, log.With("identity", name))
		if err != nil {
			cancel()
			t.Fatalf("build %s under its ServiceAccount: %v", name, err)
		}
		t.Cleanup(func() { cancel(); closeApp() })
		for _, loop := range a.Background {
			go loop(ctx)
		}
		if len(a.Functions) != 1 || a.Functions[0].Name() != name {
			t.Fatalf("build %s made %d functions", name, len(a.Functions))
		}
		c.fns[name] = a.Functions[0]
		if a.Cache != nil {
			c.cache = a.Cache
		}
	}
	return c
}

// route names the function taking an event type; "" ends the chain.
func route(typ string) string {
	switch typ {
	case events.ImagePushed, events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack:
		return "compute-spec"
	case events.UpgradePlanned:
		return "pre-pull"
	case events.ImagePrepulled:
		return "patch-pod"
	case events.PodPatched:
		return "verify"
	}
	return ""
}

// run delivers in, then every event it leads to, to the function taking
// it, as the Broker would (a "not yet" is delivered again), and returns
// the events nobody takes (rollout.completed, CDEvents, ...).
func (c *chain) run(t *testing.T, in cloudevents.Event) []cloudevents.Event {
	t.Helper()
	queue, ends := []cloudevents.Event{in}, []cloudevents.Event(nil)
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 200 {
			t.Fatal("the chain does not end")
		}
		e := queue[0]
		queue = queue[1:]
		name := route(e.Type())
		if name == "" {
			ends = append(ends, e)
			continue
		}
		r := fntest.Drive(t, c.fns[name].Handle, e)
		if r.Err != nil {
			t.Fatalf("%s on %s %s: %v", name, events.Short(e.Type()), e.Subject(), r.Err)
		}
		queue = append(queue, r.Outs...)
	}
	return ends
}

// TestRolloutUnderConfigRBAC runs a whole rollout through the four
// functions, each with a client minted for its own ServiceAccount from
// config/rbac and the admission policy of config/admission enforced, each
// connected to NATS as its own identity: compute-spec plans two waves
// (letting the policy know the owner opted in) and syncs the Deployment's
// template, pre-pull puts the image on the node, patch-pod drains the gate
// and patches, verify sees the restart through and opens the gate.
func TestRolloutUnderConfigRBAC(t *testing.T) {
	w := world.Shared(t)
	ns, appNS := w.NewNamespace(t), w.NewNamespace(t)
	ids := applyRBAC(t, w, ns)
	applyAdmission(t, w, ids, ns, appNS)
	configInplace(t, w, ns)
	old := fntest.Push(t, w, appNS+"/shop", "1.0.0")
	deployGated(t, w, appNS, "web", old.Ref, 2)
	before := podsOf(t, w, appNS, "web")

	c := buildChain(t, ids, ns, secured(t))
	waitCached(t, c.cache, appNS, "web", 2)
	next := fntest.Push(t, w, appNS+"/shop", "1.1.0")
	push := events.ImagePushedData{Registry: w.Registry.Host(), Repository: appNS + "/shop", Tag: "1.1.0",
		Digest: next.Digest, Origin: "test"}
	in, err := events.New("push-"+appNS, events.ImagePushed, events.Source("test"), push.Ref(), push)
	if err != nil {
		t.Fatal(err)
	}
	ends := c.run(t, in)

	done := findEvent(t, ends, events.RolloutCompleted)
	r, err := events.As[events.RolloutData](done)
	if err != nil {
		t.Fatal(err)
	}
	if r.Counts.Succeeded != 2 || !r.TemplateSynced {
		t.Errorf("rollout.completed %+v; want 2 succeeded and the template synced", r)
	}
	after := podsOf(t, w, appNS, "web")
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("pod %s is gone", name)
		case a.UID != b.UID:
			t.Errorf("pod %s was replaced", name)
		case !strings.Contains(a.Spec.Containers[0].Image, "1.1.0@"+next.Digest):
			t.Errorf("pod %s runs %s", name, a.Spec.Containers[0].Image)
		case !world.PodReady(&a):
			t.Errorf("pod %s is not Ready (gate %v)", name, a.Status.Conditions)
		}
	}
	d, err := w.Client().AppsV1().Deployments(appNS).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; !strings.Contains(img, "1.1.0@"+next.Digest) || d.Spec.Paused {
		t.Errorf("template %s paused %v; want the new image, not paused", img, d.Spec.Paused)
	}
}

func findEvent(t *testing.T, es []cloudevents.Event, typ string) cloudevents.Event {
	t.Helper()
	var types []string
	for _, e := range es {
		if e.Type() == typ {
			return e
		}
		types = append(types, events.Short(e.Type()))
	}
	t.Fatalf("no %s; the chain ended with %v", events.Short(typ), types)
	return cloudevents.Event{}
}

// configInplace creates config/core's config-inplace in ns, with the
// pre-pull pods in ns too (where pre-pull's Role lets it run them).
func configInplace(t *testing.T, w *world.World, ns string) {
	t.Helper()
	cm := configMap(t, "plain", "config-inplace")
	cm.Namespace, cm.ResourceVersion = ns, ""
	cm.Data["prepull-namespace"] = ns
	cm.Data["verify-seconds"] = "120"
	if _, err := w.Client().CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// deployGated runs an opted-in Deployment whose pods declare the
// inplace.dev/ready gate, opened here as the pod watcher would.
func deployGated(t *testing.T, w *world.World, ns, name, image string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers:     []corev1.Container{{Name: "app", Image: image}},
				ReadinessGates: []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}},
			}}},
	}
	if _, err := w.Client().AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, err := world.WaitPods(t.Context(), w.Client(), ns, "app="+name, fntest.Timeout, "containers ready",
		func(ps []corev1.Pod) bool {
			n := 0
			for _, p := range ps {
				if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
					n++
				}
			}
			return n == int(replicas)
		})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		fntest.SetGate(t, w, &pods[i], corev1.ConditionTrue)
	}
	if _, err := world.WaitPods(t.Context(), w.Client(), ns, "app="+name, fntest.Timeout, "all Ready",
		world.AllReady(int(replicas))); err != nil {
		t.Fatal(err)
	}
}

func podsOf(t *testing.T, w *world.World, ns, app string) map[string]corev1.Pod {
	t.Helper()
	l, err := w.Client().CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range l.Items {
		out[p.Name] = p
	}
	return out
}

// waitCached waits until compute-spec's informer cache shows n Ready pods.
func waitCached(t *testing.T, c *kube.Cache, ns, name string, n int) {
	t.Helper()
	ref := events.ObjectRef{Kind: "Deployment", Namespace: ns, Name: name}
	err := world.Eventually(t.Context(), time.Minute, "compute-spec's cache sees "+ref.String(), func(context.Context) (bool, error) {
		pods, err := c.PodsOf(ref)
		ready := 0
		for _, p := range pods {
			if inplace.Ready(p) {
				ready++
			}
		}
		return err == nil && ready == n, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// securedNATS is a NATS server taking only inplace's identities, the bus
// set up by the operator (inplace nats setup).
type securedNATS struct{ url, credentials string }

func secured(t *testing.T) securedNATS {
	t.Helper()
	dir := t.TempDir()
	keys, err := busauth.Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := bustest.Config()
	srv, err := embednats.Start(embednats.Options{DataDir: t.TempDir(), Port: -1, Users: busauth.EmbeddedUsers(cfg, keys)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	p := config.Process{NATSURL: srv.URL(), NATSCredentials: dir, Bus: cfg}
	if err := app.Setup(t.Context(), &p, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return securedNATS{url: srv.URL(), credentials: dir}
}
