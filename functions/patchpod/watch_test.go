package patchpod_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

// TestDrainEndsAtTheWatch: a gated pod behind a Service, grace 0, with the
// safety-net recheck and the drain deadline an hour away: ONE delivery
// sets the gate False and patches the pod once the watch shows it out of
// service (its Ready condition and its EndpointSlice endpoint), so only
// the watch can have moved it on. The EndpointSlices come from the cache
// (the identity may list and watch them, as config/rbac lets it).
func TestDrainEndsAtTheWatch(t *testing.T) {
	w, ns, f := watched(t)
	v1, v2 := fntest.Push(t, w, "patch/watched", "v1"), fntest.Push(t, w, "patch/watched", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "front", v1.Ref, true))
	service(t, w, ns, "front")
	waitEndpoint(t, w, pod, true)
	plan := fntest.Plan(t, pod, "up-watched", v2)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	outs, err := f.Handle(ctx, prepulled(t, plan))
	if err != nil || len(outs) != 1 || outs[0].Type() != events.PodPatched {
		t.Fatalf("one delivery = %d outputs, %v; want pod.patched, woken by the watch (the recheck is an hour away)", len(outs), err)
	}
	got := fntest.Get(t, w, pod)
	if got.Spec.Containers[0].Image != v2.Pinned {
		t.Errorf("image %s, want %s", got.Spec.Containers[0].Image, v2.Pinned)
	}
	if world.PodReady(got) {
		t.Error("the pod is Ready after its patch; want out of service")
	}
	waitEndpoint(t, w, pod, false) // it left, and stays out until verify's gate True
}

// TestGraceCountsFromTheGate: with a grace of 2s the patch comes at least
// 2s after the moment the gate went False (its message holds it to the
// nanosecond, within the second its lastTransitionTime names). The grace
// is the bus's timer (a worker is not held for it).
func TestGraceCountsFromTheGate(t *testing.T) {
	w, ns, f := watched(t)
	v1, v2 := fntest.Push(t, w, "patch/grace", "v1"), fntest.Push(t, w, "patch/grace", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "graced", v1.Ref, true))
	plan := fntest.Plan(t, pod, "up-grace", v2)
	const grace = 2
	plan.GraceSeconds = grace

	fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, plan)), events.PodPatched)
	got := fntest.Get(t, w, pod)
	st, err := inplace.ParseState(got)
	if err != nil || st == nil {
		t.Fatalf("state: %v %v", st, err)
	}
	gate := gateCondition(got)
	_, at, ok := strings.Cut(gate.Message, "; False since ")
	since, perr := time.Parse(time.RFC3339Nano, at)
	if !ok || perr != nil {
		t.Fatalf("gate message %q names no moment: %v", gate.Message, perr)
	}
	if ltt := gate.LastTransitionTime.Time; since.Before(ltt) || !since.Before(ltt.Add(time.Second)) {
		t.Errorf("gate False since %s, outside the second of its lastTransitionTime %s", since, ltt)
	}
	if waited := st.PatchedAt.Sub(since); waited < grace*time.Second {
		t.Errorf("patched %s after the gate went False, want at least the %ds grace", waited, grace)
	}
}

// TestBusyEndsAtThePodsChange: a plan for a pod whose last upgrade is
// still rolling back waits (one decision at a time per pod) and goes, in
// the same delivery, when that rollback's end changes the pod: with the
// busy recheck an hour away, only the watch can have moved it on.
func TestBusyEndsAtThePodsChange(t *testing.T) {
	read := make(chan struct{})
	var once sync.Once
	w, ns, f := watchedReading(t, func(r kube.Reader) kube.Reader {
		return readHook{Reader: r, read: func() { once.Do(func() { close(read) }) }}
	})
	v1, v2 := fntest.Push(t, w, "patch/busy", "v1"), fntest.Push(t, w, "patch/busy", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "busy", v1.Ref, false))
	setState(t, w, pod, inplace.State{UpgradeID: "up-0", Target: v1.Ref, Phase: inplace.PhaseRollingBack,
		Containers: []inplace.ContainerState{{Name: "app", PreviousImage: v1.Ref}}})
	plan := fntest.Plan(t, pod, "up-busy", v2)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	type answer struct {
		n   int
		typ string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		outs, err := f.Handle(ctx, prepulled(t, plan))
		a := answer{n: len(outs), err: err}
		if len(outs) == 1 {
			a.typ = outs[0].Type()
		}
		done <- a
	}()
	select { // the delivery has read the pod (busy) or is about to decide on it
	case <-read:
	case a := <-done:
		t.Fatalf("the delivery answered %d outputs, %v before reading the pod", a.n, a.err)
	}
	setState(t, w, pod, inplace.State{UpgradeID: "up-0", Target: v1.Ref, Phase: inplace.PhaseRolledBack,
		Containers: []inplace.ContainerState{{Name: "app", PreviousImage: v1.Ref}}})
	a := <-done
	if a.err != nil || a.n != 1 || a.typ != events.PodPatched {
		t.Fatalf("one delivery = %d outputs, %v; want pod.patched once the rollback ended (the busy recheck is an hour away)", a.n, a.err)
	}
	if st, err := inplace.ParseState(fntest.Get(t, w, pod)); err != nil || st == nil || st.UpgradeID != "up-busy" {
		t.Errorf("state %+v, %v; want up-busy", st, err)
	}
}

// readHook calls read at each read of a pod.
type readHook struct {
	kube.Reader
	read func()
}

func (r readHook) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	p, err := r.Reader.Pod(ctx, ns, name)
	r.read()
	return p, err
}

// setState writes the pod's state annotation as verify would.
func setState(t *testing.T, w *world.World, pod *corev1.Pod, st inplace.State) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{inplace.StateAnnotation: st.Encode()}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Client().CoreV1().Pods(pod.Namespace).Patch(t.Context(), pod.Name, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// watched is setup with patch-pod reading pods and EndpointSlices from an
// informer cache whose changes wake its waiting deliveries, as `inplace
// run` wires it, with an hour for the safety nets.
func watched(t *testing.T) (*world.World, string, *patchpod.Function) {
	return watchedReading(t, func(r kube.Reader) kube.Reader { return r })
}

// watchedReading is watched with patch-pod reading pods through wrap.
func watchedReading(t *testing.T, wrap func(kube.Reader) kube.Reader) (*world.World, string, *patchpod.Function) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	client := fntest.Identity(t, w, patchpod.RBAC, ns)
	c, err := kube.NewPodCache(w.Client(), 0) // cluster-wide: the test's identity is namespaced
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WithEndpointSlices(); err != nil {
		t.Fatal(err)
	}
	keys := &notify.Keys{}
	if _, err := c.PodInformer().AddEventHandler(patchpod.WatchPods(keys)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SliceInformer().AddEventHandler(patchpod.WatchSlices(keys)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r := c.Reader(client)
	f := patchpod.New(patchpod.Deps{Client: client, Reader: wrap(r), Slices: r, Changes: keys, Guard: fntest.Guard(client),
		Recorder: fntest.Recorder(t, client, patchpod.Name), DrainRecheck: time.Hour, DrainTimeout: time.Hour, BusyRecheck: time.Hour})
	return w, ns, f
}

// service creates a Service selecting app.
func service(t *testing.T, w *world.World, ns, app string) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := w.Client().CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitEndpoint waits until pod is a ready (or a not ready) endpoint of an
// EndpointSlice.
func waitEndpoint(t *testing.T, w *world.World, pod *corev1.Pod, ready bool) {
	t.Helper()
	what := fmt.Sprintf("pod %s a ready endpoint: %v", pod.Name, ready)
	err := world.Eventually(t.Context(), fntest.Timeout, what, func(ctx context.Context) (bool, error) {
		list, err := w.Client().DiscoveryV1().EndpointSlices(pod.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				if e.TargetRef != nil && e.TargetRef.UID == pod.UID {
					return (e.Conditions.Ready == nil || *e.Conditions.Ready) == ready, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
