package fleetworld_test

import (
	"context"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// chainFleet is the three-cluster world with inplace running on each
// member (the real chain, as a fleet member) and the hub's promotion
// controller, each member running Deployment shop/web of 2 opted-in pods
// on 1.0.0.
type chainFleet struct {
	t      *testing.T
	f      *world.Fleet
	stacks map[string]*stack.Stack
	c      *fleetctl.Controller
	store  *fleetctl.Store
}

func startChainFleet(t *testing.T) *chainFleet {
	t.Helper()
	ctx := t.Context()
	t0 := time.Now()
	f := startFleet(t)
	cf := &chainFleet{t: t, f: f, stacks: map[string]*stack.Stack{}}
	cf.c, cf.store = startHub(t, conn(t, f.HubConn))
	if _, err := f.Registry.Push(ctx, "shop/web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.Members {
		s, err := stack.Start(ctx, m.World, stack.Options{Dir: t.TempDir(), Member: m})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		cf.stacks[m.Name] = s
		cf.deploy(m)
	}
	t.Logf("fleet with inplace on %d members started in %s", len(f.Members), time.Since(t0).Round(time.Millisecond))
	return cf
}

// deploy creates shop/web on m and waits until its pods are Ready.
func (cf *chainFleet) deploy(m *world.Member) {
	cf.t.Helper()
	ctx, c := cf.t.Context(), m.World.Client()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: web.Namespace}},
		metav1.CreateOptions{}); err != nil {
		cf.t.Fatal(err)
	}
	labels := map[string]string{"app": web.Name}
	replicas := int32(2)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: web.Name, Namespace: web.Namespace,
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, MinReadySeconds: 2, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: cf.f.Registry.Host() + "/shop/web:1.0.0"}}}}}}
	if _, err := c.AppsV1().Deployments(web.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		cf.t.Fatal(err)
	}
	if _, err := world.WaitPods(ctx, c, web.Namespace, "app="+web.Name, 2*time.Minute, "all Ready", world.AllReady(2)); err != nil {
		cf.t.Fatalf("member %s: %v", m.Name, err)
	}
}

// push pushes shop/web:tag to the fleet's registry and begins it at the
// hub, as the hub's receiver would.
func (cf *chainFleet) push(id, tag string, opts ...registry.PushOption) string {
	cf.t.Helper()
	digest, err := cf.f.Registry.Push(cf.t.Context(), "shop/web", tag, opts...)
	if err != nil {
		cf.t.Fatal(err)
	}
	d := events.ImagePushedData{Registry: cf.f.Registry.Host(), Repository: "shop/web", Tag: tag, Digest: digest,
		PushedAt: time.Now().UTC(), Origin: "distribution"}
	e, err := events.New(id, events.ImagePushed, events.Source("receiver"), d.Ref(), d)
	if err != nil {
		cf.t.Fatal(err)
	}
	if err := cf.c.Begin(cf.t.Context(), e); err != nil {
		cf.t.Fatal(err)
	}
	return digest
}

// record waits until the push's record satisfies cond.
func (cf *chainFleet) record(push, what string, within time.Duration, cond func(*fleet.Record) bool) *fleet.Record {
	cf.t.Helper()
	var r *fleet.Record
	err := world.Eventually(cf.t.Context(), within, what, func(ctx context.Context) (bool, error) {
		var err error
		r, err = cf.store.Get(ctx, push)
		return r != nil && cond(r), err
	})
	if err != nil {
		cf.t.Fatalf("%v; record: %+v", err, r)
	}
	return r
}

// pod is what an in-place upgrade keeps (UID) and changes (image,
// imageID, restarts) of a pod.
type pod struct {
	UID            types.UID
	Image, ImageID string
	Restarts       int32
	Ready          bool
}

// pods are member m's pods of shop/web by name.
func (cf *chainFleet) pods(m string) map[string]pod {
	cf.t.Helper()
	list, err := cf.f.Member(m).World.Client().CoreV1().Pods(web.Namespace).List(cf.t.Context(),
		metav1.ListOptions{LabelSelector: "app=" + web.Name})
	if err != nil {
		cf.t.Fatal(err)
	}
	out := map[string]pod{}
	for _, p := range list.Items {
		v := pod{UID: p.UID, Image: p.Spec.Containers[0].Image, Ready: world.PodReady(&p)}
		if cs := world.ContainerStatus(&p, "app"); cs != nil {
			v.ImageID, v.Restarts = cs.ImageID, cs.RestartCount
		}
		out[p.Name] = v
	}
	return out
}

// events are the events of typ on member m's own bus, in stream order.
func (cf *chainFleet) events(m, typ string) []cloudevents.Event {
	cf.t.Helper()
	b := cf.stacks[m].Bus
	ctx := cf.t.Context()
	c, err := b.JetStream().CreateConsumer(ctx, b.Config().Stream, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy,
		InactiveThreshold: 10 * time.Second, FilterSubject: b.Config().Subject(typ)})
	if err != nil {
		cf.t.Fatal(err)
	}
	defer func() { _ = b.JetStream().DeleteConsumer(ctx, b.Config().Stream, c.CachedInfo().Name) }()
	var out []cloudevents.Event
	for {
		batch, err := c.FetchNoWait(100)
		if err != nil {
			cf.t.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			e, err := bus.Decode(ctx, msg.Subject(), msg.Headers(), msg.Data())
			if err != nil {
				cf.t.Fatal(err)
			}
			out = append(out, e)
		}
		if n == 0 {
			return out
		}
	}
}

// waitEvent waits for the first event of typ on member m's bus.
func (cf *chainFleet) waitEvent(m, typ string, within time.Duration) cloudevents.Event {
	cf.t.Helper()
	var got []cloudevents.Event
	err := world.Eventually(cf.t.Context(), within, typ+" on "+m, func(context.Context) (bool, error) {
		got = cf.events(m, typ)
		return len(got) > 0, nil
	})
	if err != nil {
		cf.t.Fatal(err)
	}
	return got[0]
}

// movedInPlace checks that every pod of before is there with its UID,
// runs digest and restarted exactly once more.
func movedInPlace(t *testing.T, m string, before, after map[string]pod, digest string) {
	t.Helper()
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s: pod %s is gone", m, name)
		case a.UID != b.UID:
			t.Errorf("%s: pod %s was replaced (UID %s → %s)", m, name, b.UID, a.UID)
		case !strings.HasSuffix(a.ImageID, digest) || !strings.Contains(a.Image, "1.1.0"):
			t.Errorf("%s: pod %s runs %s (%s); want 1.1.0 at %s", m, name, a.Image, a.ImageID, digest)
		case a.Restarts != b.Restarts+1:
			t.Errorf("%s: pod %s restarts %d → %d; want one more", m, name, b.Restarts, a.Restarts)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%s: %d pods, want %d", m, len(after), len(before))
	}
}
