package controller_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/inplace"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// newChain is compute-spec with its rollout controller over d, as inplace
// run wires them; d.Cache is compute-spec's too.
func newChain(d controller.Deps) (*computespec.Function, *controller.Rollouts) {
	ro := controller.New(d)
	c, _ := d.Cache.(computespec.Cache)
	return computespec.New(computespec.Deps{Cache: c, Store: d.Store, Defaults: d.Defaults, Rollouts: ro,
		Recorder: d.Recorder, OptIn: d.OptIn, Log: d.Log, Now: d.Now}), ro
}

// env is one test's compute-spec and rollout controller over the shared world and its own NATS.
type env struct {
	t     *testing.T
	w     *world.World
	ns    string
	kv    *bus.KV
	cache *kube.Cache
	fn    *computespec.Function
	ro    *controller.Rollouts
}

func newEnv(t *testing.T) *env {
	t.Helper()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	kv, err := bustest.New(t, nil).KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cache, err := kube.NewCache(w.Client(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fn, ro := newChain(controller.Deps{Cache: cache, Store: kv, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log)})
	return &env{t: t, w: w, ns: ns, kv: kv, cache: cache, fn: fn, ro: ro}
}

// image pushes repo:tag to the world's registry and returns the reference and digest.
func (e *env) image(repo, tag string) (string, string) {
	e.t.Helper()
	d, err := e.w.Registry.Push(e.t.Context(), e.ns+"/"+repo, tag)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.w.Registry.Host() + "/" + e.ns + "/" + repo + ":" + tag, d
}

// pushed is the image.pushed event of repo:tag@digest in the world's registry.
func (e *env) pushed(id, repo, tag, digest string) cloudevents.Event {
	e.t.Helper()
	d := events.ImagePushedData{Registry: e.w.Registry.Host(), Repository: e.ns + "/" + repo, Tag: tag, Digest: digest, Origin: "test"}
	ev, err := events.New(id, events.ImagePushed, events.Source("test"), d.Ref(), d)
	if err != nil {
		e.t.Fatal(err)
	}
	return ev
}

type spec struct {
	kind        string // Deployment (default), StatefulSet or DaemonSet (one pod per node)
	name        string
	replicas    int32
	minReady    int32
	annotations map[string]string
	containers  []corev1.Container
	init        []corev1.Container
	// edit changes the object before it is created.
	edit func(obj any)
}

// create makes a workload and waits until its pods are Ready.
func (e *env) create(s spec) {
	e.t.Helper()
	ctx := e.t.Context()
	labels := map[string]string{"app": s.name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: s.containers, InitContainers: s.init}}
	meta := metav1.ObjectMeta{Name: s.name, Namespace: e.ns, Annotations: s.annotations}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	edit := func(obj any) {
		if s.edit != nil {
			s.edit(obj)
		}
	}
	var err error
	switch s.kind {
	case "StatefulSet":
		sts := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: &s.replicas, Selector: sel,
			Template: tmpl, PodManagementPolicy: appsv1.ParallelPodManagement}}
		edit(sts)
		_, err = e.w.Client().AppsV1().StatefulSets(e.ns).Create(ctx, sts, metav1.CreateOptions{})
	case "DaemonSet":
		s.replicas = int32(len(e.w.NodeNames()))
		ds := &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}}
		edit(ds)
		_, err = e.w.Client().AppsV1().DaemonSets(e.ns).Create(ctx, ds, metav1.CreateOptions{})
	default:
		d := &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &s.replicas, MinReadySeconds: s.minReady, Selector: sel, Template: tmpl}}
		edit(d)
		_, err = e.w.Client().AppsV1().Deployments(e.ns).Create(ctx, d, metav1.CreateOptions{})
	}
	if err != nil {
		e.t.Fatalf("create %s: %v", s.name, err)
	}
	if _, err := world.WaitPods(ctx, e.w.Client(), e.ns, "app="+s.name, 2*time.Minute,
		"all Ready", world.AllReady(int(s.replicas))); err != nil {
		e.t.Fatal(err)
	}
	kind := s.kind
	if kind == "" {
		kind = "Deployment"
	}
	e.cached(events.ObjectRef{Kind: kind, Namespace: e.ns, Name: s.name}, int(s.replicas))
}

// cached waits until compute-spec's cache shows n Ready pods of the workload.
func (e *env) cached(ref events.ObjectRef, n int) {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), 30*time.Second, "cache sees "+ref.String(), func(context.Context) (bool, error) {
		pods, err := e.cache.PodsOf(ref)
		ready := 0
		for _, p := range pods {
			if inplace.Ready(p) {
				ready++
			}
		}
		return err == nil && ready == n, err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// handle runs compute-spec on in and fails the test on an error.
func (e *env) handle(in cloudevents.Event) []cloudevents.Event {
	e.t.Helper()
	outs, err := e.fn.Handle(e.t.Context(), in)
	if err != nil {
		e.t.Fatalf("handle %s: %v", in.Type(), err)
	}
	return outs
}

// plans decodes the upgrade.planned outputs, by pod name.
func plans(t *testing.T, outs []cloudevents.Event) map[string]events.Plan {
	t.Helper()
	got := map[string]events.Plan{}
	for _, o := range outs {
		if o.Type() != events.UpgradePlanned {
			continue
		}
		p, err := events.As[events.Plan](o)
		if err != nil {
			t.Fatal(err)
		}
		got[p.Pod.Name] = p
	}
	return got
}

// state reads a workload's rollout from the KV bucket.
func (e *env) state(kind, name string) *rollout.Rollout {
	e.t.Helper()
	raw, _, err := e.kv.Get(e.t.Context(), rollout.Key(events.ObjectRef{Kind: kind, Namespace: e.ns, Name: name}))
	if err != nil {
		e.t.Fatal(err)
	}
	if raw == nil {
		return nil
	}
	var r rollout.Rollout
	if err := json.Unmarshal(raw, &r); err != nil {
		e.t.Fatal(err)
	}
	return &r
}

func container(name, image string) corev1.Container {
	return corev1.Container{Name: name, Image: image}
}
