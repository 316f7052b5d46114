package watcher_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube/watcher"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// recorder publishes to the bus, failing the first fails calls, and
// records every id it was asked to publish (ids) and the events the bus
// took (byID).
type recorder struct {
	bus   *bus.Bus
	mu    sync.Mutex
	fails int
	ids   []string
	byID  map[string]cloudevents.Event
}

func (r *recorder) Publish(ctx context.Context, e cloudevents.Event) error {
	r.mu.Lock()
	r.ids = append(r.ids, e.ID())
	fail := r.fails > 0
	r.fails--
	r.mu.Unlock()
	if fail {
		return errors.New("bus down (test)")
	}
	if err := r.bus.Publish(ctx, e); err != nil {
		return err
	}
	r.mu.Lock()
	r.byID[e.ID()] = e
	r.mu.Unlock()
	return nil
}

func (r *recorder) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.ids {
		if x == id {
			n++
		}
	}
	return n
}

func (r *recorder) of(typ string) []cloudevents.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []cloudevents.Event
	for _, e := range r.byID {
		if e.Type() == typ {
			out = append(out, e)
		}
	}
	return out
}

// start runs a watcher on ns as its own ServiceAccount, with an informer
// resyncing every second (the minimum).
func start(t *testing.T, w *world.World, ns string, pub watcher.Publisher) kubernetes.Interface {
	t.Helper()
	client := fntest.Identity(t, w, watcher.RBAC, ns)
	f := informers.NewSharedInformerFactoryWithOptions(client, time.Second, informers.WithNamespace(ns))
	wt, err := watcher.New(f.Core().V1().Pods().Informer(), client, pub, watcher.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = wt.Run(ctx) }()
	f.Start(ctx.Done())
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })
	return client
}

// TestWatcherPublishesOncePerState: an upgrade in flight yields pod.updated
// per pod state and container.restarted when the container restarts; a
// resync republishes the same ids and the stream keeps each once; failed
// publishes are retried (with the pod's newer state, if it changed
// meanwhile: a pod.updated waiting to go out stands for its pod's latest). A pod with no gate whose upgrade lands (on the
// target and ready: verify records that success on the bus, not on the
// pod) yields one pod.updated for that state, which resyncs do not repeat.
func TestWatcherPublishesOncePerState(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	b := bustest.New(t, nil)
	rec := &recorder{bus: b, fails: 2, byID: map[string]cloudevents.Event{}}
	start(t, w, ns, rec)
	v1, v2 := fntest.Push(t, w, "watcher/app", "v1"), fntest.Push(t, w, "watcher/app", "v2")
	fntest.RunPod(t, w, fntest.Pod(ns, "quiet", v1.Ref, false)) // no upgrade: no events
	// web's gate stays False (as patch-pod leaves it until verify's last
	// write): its upgrade stays in flight.
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "web", v1.Ref, true))
	plain := fntest.RunPod(t, w, fntest.Pod(ns, "plain", v1.Ref, false))
	gate := inplace.GatePatch(pod.UID, corev1.ConditionFalse, inplace.GateReasonStart, "test", time.Now())
	if _, err := w.Client().CoreV1().Pods(ns).Patch(t.Context(), pod.Name, types.StrategicMergePatchType, gate, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	fntest.WaitPod(t, w, pod, "NotReady, its gate False", func(p *corev1.Pod) bool { return !world.PodReady(p) })
	upgrade := func(p *corev1.Pod) *corev1.Pod {
		p = fntest.Get(t, w, p)
		patch, err := inplace.Patch(p, fntest.Plan(t, p, "up-w", v2), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Client().CoreV1().Pods(ns).Patch(t.Context(), p.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		return fntest.WaitPod(t, w, p, "restarted on v2, its container ready", func(p *corev1.Pod) bool {
			cs := fntest.ContainerStatus(p)
			return cs.RestartCount == 1 && cs.ImageID == v2.ImageID && cs.Ready && world.PodReady(p) == !inplace.HasGate(p)
		})
	}
	final, landed := upgrade(pod), upgrade(plain)
	finalID := events.DeriveID(events.PodStateKey(final), events.PodUpdated, "")
	landedID := events.DeriveID(events.PodStateKey(landed), events.PodUpdated, "")
	if err := world.Eventually(t.Context(), fntest.Timeout, "the final state republished by resyncs", func(context.Context) (bool, error) {
		return rec.count(finalID) >= 3, nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := rec.count(landedID); n != 1 {
		t.Errorf("the landed state of %s published %d times through the same resyncs; want once", plain.Name, n)
	}

	var restarts []events.ContainerRestartedData
	for _, e := range rec.of(events.ContainerRestarted) {
		if d := fntest.Data[events.ContainerRestartedData](t, e); d.Pod.Name == pod.Name {
			restarts = append(restarts, d)
		}
	}
	cs := fntest.ContainerStatus(final)
	if len(restarts) != 1 || restarts[0].Container != "app" || restarts[0].NewContainerID != cs.ContainerID ||
		restarts[0].OldContainerID != fntest.ContainerStatus(pod).ContainerID || restarts[0].RestartCount != 1 {
		t.Errorf("container.restarted = %+v, want one for app from %s to %s", restarts, fntest.ContainerStatus(pod).ContainerID, cs.ContainerID)
	}
	for _, e := range rec.of(events.PodUpdated) {
		if d := fntest.Data[events.PodUpdatedData](t, e); d.Pod.Name != pod.Name && d.Pod.Name != plain.Name {
			t.Errorf("pod.updated for %s, which has no upgrade in flight", d.Pod.Name)
		}
	}
	stored := storedIDs(t, b, "inplace.pod.updated")
	if distinct := len(rec.of(events.PodUpdated)); stored != distinct || distinct < 2 {
		t.Errorf("stream holds %d pod.updated, want one per distinct state (%d, at least 2)", stored, distinct)
	}
}

// storedIDs counts the messages the stream holds on subject.
func storedIDs(t *testing.T, b *bus.Bus, subject string) int {
	t.Helper()
	s, err := b.JetStream().Stream(t.Context(), b.Config().Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	return int(info.State.Subjects[subject])
}

// TestWatcherOpensGate: a new pod declaring the gate gets the condition
// True and becomes Ready; the watcher's role cannot write pod specs.
func TestWatcherOpensGate(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	client := start(t, w, ns, &recorder{bus: bustest.New(t, nil), byID: map[string]cloudevents.Event{}})
	v1 := fntest.Push(t, w, "watcher/gated", "v1")
	p := fntest.Pod(ns, "gated", v1.Ref, true)
	if _, err := w.Client().CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready := fntest.WaitPod(t, w, p, "Ready through the gate", world.PodReady)
	for _, c := range ready.Status.Conditions {
		if c.Type == inplace.ReadinessGate && (c.Status != corev1.ConditionTrue || c.Reason != inplace.GateReasonIdle) {
			t.Errorf("gate condition = %+v, want True %s", c, inplace.GateReasonIdle)
		}
	}
	_, err := client.CoreV1().Pods(ns).Patch(t.Context(), p.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("patch the pod itself: err = %v, want Forbidden", err)
	}
}
