package knative_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/knative"
	"github.com/inplace-dev/inplace/test/world"
)

var (
	projectOnce sync.Once
	shared      *knative.Project
	projectErr  error
)

// project is inplace in Knative mode, started once per test binary.
// INPLACE_KNATIVE_MUTATE breaks it on purpose (mutations_test.go).
func project(t *testing.T) *knative.Project {
	t.Helper()
	n := knative.Shared(t)
	projectOnce.Do(func() {
		mutate, err := mutation(os.Getenv("INPLACE_KNATIVE_MUTATE"))
		if err != nil {
			projectErr = err
			return
		}
		shared, projectErr = knative.StartProject(context.Background(), n, knative.ProjectOptions{Mutate: mutate})
		if projectErr == nil && mutate != nil {
			projectErr = applyRuntimeMutation(shared, os.Getenv("INPLACE_KNATIVE_MUTATE"))
		}
	})
	if projectErr != nil {
		t.Fatalf("%v\n%s", projectErr, n.Logs(25))
	}
	return shared
}

// pod is what must not change about a pod upgraded in place, and what must.
type pod struct {
	UID            types.UID
	Node, IP       string
	Image, ImageID string
	Restarts       int32
	Ready          bool
}

func pods(t *testing.T, w *world.World, ns, app string) map[string]pod {
	t.Helper()
	list, err := w.Client().CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pod{}
	for _, p := range list.Items {
		info := pod{UID: p.UID, Node: p.Spec.NodeName, IP: p.Status.PodIP, Image: p.Spec.Containers[0].Image, Ready: world.PodReady(&p)}
		if cs := world.ContainerStatus(&p, "app"); cs != nil {
			info.ImageID, info.Restarts = cs.ImageID, cs.RestartCount
		}
		out[p.Name] = info
	}
	return out
}

// TestChain is the whole chain in Knative mode: a real push to the
// registry, its webhook to the receiver (a Knative Service), image.pushed
// into the real Broker, compute-spec, pre-pull, patch-pod and verify as
// `inplace function` processes behind config/knative's Triggers, the real
// ApiServerSource adapter feeding verify (no pod watcher runs: the gated
// Deployment's new pods only become Ready because verify opens their gate
// from its events), pods upgraded in place, templates synced.
func TestChain(t *testing.T) {
	p := project(t)
	w := p.Node.World
	ctx := t.Context()
	ns := w.NewNamespace(t)
	if err := p.WaitWatching(ctx, ns, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	ref := func(tag string) string { return w.Registry.Host() + "/" + ns + "/app:" + tag }
	if _, err := w.Registry.Push(ctx, ns+"/app", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	deployShop(t, p, ns, ref("1.0.0"))
	before := map[string]map[string]pod{"web": pods(t, w, ns, "web"), "cart": pods(t, w, ns, "cart")}

	digest, err := w.Registry.Push(ctx, ns+"/app", "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]events.RolloutData{}
	for range 2 {
		e, err := p.Recorder.Wait(ctx, 3*time.Minute, "rollout.completed for "+ns, func(e cloudevents.Event) bool {
			if e.Type() != events.RolloutCompleted && e.Type() != events.RolloutHalted {
				return false
			}
			d, err := events.As[events.RolloutData](e)
			_, seen := done[d.Workload.Name]
			return err == nil && d.Workload.Namespace == ns && !seen
		})
		if err != nil {
			t.Fatalf("%v\nevents through the Broker: %v\n%s", err, typesSeen(p, ns), p.Node.Logs(15))
		}
		d, _ := events.As[events.RolloutData](e)
		if e.Type() == events.RolloutHalted {
			t.Fatalf("rollout of %s halted: %s: %s", d.Workload, d.Reason, d.Message)
		}
		done[d.Workload.Name] = d
	}
	for app, n := range map[string]int{"web": 3, "cart": 2} {
		if d := done[app]; !d.TemplateSynced || d.Counts.Succeeded != n {
			t.Errorf("%s: rollout.completed says %d succeeded, template synced %v; want %d, true", app, d.Counts.Succeeded, d.TemplateSynced, n)
		}
		checkInPlace(t, before[app], pods(t, w, ns, app), digest)
	}
	checkTemplates(t, w, ns, digest)
	for _, want := range []string{events.ImagePushed, events.UpgradePlanned, events.ImagePrepulled, events.PodPatched,
		events.UpgradeSucceeded, events.RolloutCompleted, "dev.knative.apiserver.resource.update"} {
		if !slices.Contains(typesSeen(p, ns), want) {
			t.Errorf("no %s through the Broker; saw %v", want, typesSeen(p, ns))
		}
	}
	for _, bad := range []string{events.PodUpdated, events.ContainerRestarted} {
		if slices.Contains(typesSeen(p, ns), bad) {
			t.Errorf("%s through the Broker: the project's pod watcher must not run in Knative mode", bad)
		}
	}
}

// deployShop creates a gated Deployment (web, 3 pods) and a StatefulSet
// (cart, 2 pods) that opt in, and waits until every pod is Ready.
func deployShop(t *testing.T, p *knative.Project, ns, image string) {
	t.Helper()
	w := p.Node.World
	sel := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	tmpl := func(app string, gate bool) corev1.PodTemplateSpec {
		s := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
		if gate {
			s.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
		}
		return s
	}
	c := w.Client().AppsV1()
	_, err := c.Deployments(ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"inplace.dev/policy": "semver:minor",
			"inplace.dev/max-unavailable": "50%", "inplace.dev/grace-seconds": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: sel("web"), Template: tmpl("web", true)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StatefulSets(ns).Create(t.Context(), &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cart", Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: sel("cart"), Template: tmpl("cart", false),
			PodManagementPolicy: appsv1.ParallelPodManagement},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for app, n := range map[string]int{"web": 3, "cart": 2} {
		if _, err := world.WaitPods(t.Context(), w.Client(), ns, "app="+app, 2*time.Minute, "all Ready", world.AllReady(n)); err != nil {
			t.Fatalf("%s: %v (the gated web pods become Ready only when verify, fed by the ApiServerSource, opens their gate)\n"+
				"events through the Broker: %v\n%s", app, err, countTypes(p), p.Node.Logs(15))
		}
	}
}

// checkInPlace: same pods, UIDs, nodes and IPs; one restart each; the
// pushed digest running.
func checkInPlace(t *testing.T, before, after map[string]pod, digest string) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("%d pods after, %d before", len(after), len(before))
	}
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("pod %s is gone", name)
		case a.UID != b.UID || a.Node != b.Node || a.IP != b.IP:
			t.Errorf("pod %s was replaced: %+v → %+v", name, b, a)
		case a.Restarts != b.Restarts+1:
			t.Errorf("pod %s restarted %d times, want 1", name, a.Restarts-b.Restarts)
		case imageref.DigestOf(a.ImageID) != digest || !strings.HasSuffix(a.Image, "@"+digest):
			t.Errorf("pod %s runs %s (%s), want @%s", name, a.Image, a.ImageID, digest)
		case !a.Ready:
			t.Errorf("pod %s is not Ready", name)
		}
	}
}

// checkTemplates: both templates show the digest, with no new ReplicaSet
// and no new StatefulSet revision left pending.
func checkTemplates(t *testing.T, w *world.World, ns, digest string) {
	t.Helper()
	c := w.Client().AppsV1()
	d, err := c.Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+digest) || d.Spec.Paused {
		t.Errorf("Deployment template %s (paused %v), want @%s, not paused", img, d.Spec.Paused, digest)
	}
	rss, err := c.ReplicaSets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 1 {
		t.Errorf("%d ReplicaSets, want 1 (no rollout)", len(rss.Items))
	}
	s, err := c.StatefulSets(ns).Get(t.Context(), "cart", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := s.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+digest) {
		t.Errorf("StatefulSet template %s, want @%s", img, digest)
	}
}

// typesSeen are the types of the events of ns the recorder got.
func typesSeen(p *knative.Project, ns string) []string {
	var out []string
	for _, e := range p.Recorder.Events() {
		about := e.Subject()
		if e.Type() == "dev.knative.apiserver.resource.update" {
			about = fmt.Sprint(e.Extensions()["namespace"]) + "/"
		}
		if strings.Contains(about, ns) || e.Type() == events.ImagePushed && strings.Contains(e.Subject(), ns+"/app") ||
			e.Type() == events.RolloutCompleted || e.Type() == events.RolloutHalted {
			if !slices.Contains(out, e.Type()) {
				out = append(out, e.Type())
			}
		}
	}
	return out
}

// countTypes counts the recorder's events by type.
func countTypes(p *knative.Project) map[string]int {
	m := map[string]int{}
	for _, e := range p.Recorder.Events() {
		m[e.Type()]++
	}
	return m
}
