package computespec_test

import (
	"context"
	"log/slog"
	"os"
	"sort"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/pulls"
	"github.com/inplace-dev/inplace/pkg/rollout"
	"github.com/inplace-dev/inplace/pkg/settle"
	"github.com/inplace-dev/inplace/test/world"
)

// pullEnv is an env whose compute-spec reads the nodes' pulls (nodes and
// pre-pull pods in pullNS, from its informers), as in `inplace run`.
func pullEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t)
	pullNS := e.w.NewNamespace(t)
	cache, err := kube.NewCache(e.w.Client(), 0)
	if err != nil {
		t.Fatal(err)
	}
	cache.WithNodes()
	if err := cache.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	d := config.StandardDefaults()
	d.PrepullNamespace = pullNS
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.cache = cache
	e.fn = computespec.New(computespec.Deps{Cache: cache, Store: e.kv, Log: log, Pulls: cache,
		Defaults: config.NewStore(d, log)})
	return e, pullNS
}

// prepullOn starts what pre-pull's Warm starts: a pre-pull pod of images
// on node, labelled with their key.
func prepullOn(t *testing.T, w *world.World, ns, node string, images []string) *corev1.Pod {
	t.Helper()
	var cs []corev1.Container
	for i, img := range images {
		cs = append(cs, corev1.Container{Name: "pull-" + string(rune('a'+i)), Image: img, Command: []string{"/bin/true"}})
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "prepull-" + node, Namespace: ns,
		Labels: map[string]string{pulls.LabelManagedBy: pulls.ManagedBy, pulls.LabelComponent: pulls.Component,
			pulls.LabelImages: pulls.Key(images)}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: cs}}
	p, err := w.Client().CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A pod is planned only once its node has the image, and the next wave
// comes from the watch: a DaemonSet on every node, the whole budget free,
// and a push of an image no node has. The push plans nothing (every node
// is still to pull). One node's pre-pull pod then completes, and the
// Waker, fed by the informers alone (no bus, no redelivery, no timer in
// the test), plans exactly the pod on that node (which by then lists the
// image, or its pre-pull pod says it pulled); the others still wait.
// Without the hold the push plans every pod at once; without the Waker
// nothing is planned after the pull.
func TestPodIsPlannedOnceItsNodeHasTheImage(t *testing.T) {
	e, pullNS := pullEnv(t)
	nodes := e.w.NodeNames()
	if len(nodes) < 2 {
		t.Skip("needs two nodes")
	}
	v1, _ := e.image("agent", "1.0.0")
	_, d11 := e.image("agent", "1.1.0")
	e.create(spec{kind: "DaemonSet", name: "agent", containers: []corev1.Container{container("app", v1)},
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})

	outs, err := e.fn.Handle(t.Context(), e.pushed("push-1", "agent", "1.1.0", d11))
	if k, _ := settle.Classify(err); err != nil && k != settle.Later {
		t.Fatalf("push: %v", err)
	}
	if got := plans(t, outs); len(got) != 0 {
		t.Fatalf("the push planned %d pods before any node had the image: %v", len(got), keys(got))
	}
	r := e.state("DaemonSet", "agent")
	if r == nil || r.Phase != rollout.Running || len(r.Pods) != len(nodes) {
		t.Fatalf("rollout = %+v; want it running with a pod per node", r)
	}
	for name, p := range r.Pods {
		if p.State != rollout.Pending {
			t.Fatalf("pod %s is %s before its node has the image; want Pending", name, p.State)
		}
	}

	published := make(chan cloudevents.Event, 16)
	w, err := computespec.NewWaker(e.fn, e.cache, func(_ context.Context, ev cloudevents.Event) error {
		published <- ev
		return nil
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	go w.Run(t.Context())

	var pod *rollout.Pod
	for _, p := range r.Pods {
		if p.Node == nodes[0] {
			pod = p
		}
	}
	images, _ := pulls.Targets(pod.Containers)
	pp := prepullOn(t, e.w, pullNS, nodes[0], images)

	var got events.Plan
	select {
	case ev := <-published:
		if ev.Type() != events.UpgradePlanned {
			t.Fatalf("published %s; want upgrade.planned", ev.Type())
		}
		if got, err = events.As[events.Plan](ev); err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no pod planned after the node's pre-pull completed")
	}
	if got.Pod.Node != nodes[0] || got.Pod.Name != pod.Name {
		t.Errorf("planned %s on %s; want %s on %s", got.Pod.Name, got.Pod.Node, pod.Name, nodes[0])
	}
	// Both only ever move forward: what shows now held when it was planned.
	done, err := e.w.Client().CoreV1().Pods(pullNS).Get(t.Context(), pp.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := e.w.Client().CoreV1().Nodes().Get(t.Context(), nodes[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, msg := pulls.Evaluate(done); v != pulls.Pulled && !pulls.OnNode(node.Status.Images, images, false) {
		t.Errorf("planned while node %s had not the image (pre-pull pod: %s; status.images %v)", nodes[0], msg, node.Status.Images)
	}
	r = e.state("DaemonSet", "agent")
	for name, p := range r.Pods {
		if want := p.Node == nodes[0]; (p.State == rollout.InFlight) != want {
			t.Errorf("pod %s on %s is %s; only the pod on %s may be planned", name, p.Node, p.State, nodes[0])
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
