package watcher

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/world"
)

// published records what the watcher puts on the bus.
type published struct {
	mu  sync.Mutex
	ids []string
}

func (p *published) Publish(_ context.Context, e cloudevents.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids = append(p.ids, e.Type()+" "+e.ID())
	return nil
}

// Changes of a pod that pile up before the watcher publishes them (each
// bearing on verify's decision) go out as one pod.updated, the pod's
// latest state (verify reads the pod from its cache anyway); each
// container.restarted still goes out, and another pod of the same name
// (another UID) has its own pod.updated.
func TestAPodsWaitingUpdatesGoOutAsItsLatest(t *testing.T) {
	client := fake.NewClientset()
	inf := informers.NewSharedInformerFactory(client, 0).Core().V1().Pods().Informer()
	out := &published{}
	w, err := New(inf, client, out, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	p10, p11, p12 := pod("10", active, 0, "containerd://a"), waiting(pod("11", active, 0, "containerd://a"), "ErrImagePull"), up(pod("12", active, 1, "containerd://b"))
	other := pod("13", active, 0, "containerd://c")
	other.UID = "uid-2"
	w.observe(nil, p10)
	w.observe(p10, p11)
	w.observe(p11, p12)
	w.observe(nil, other)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	if err := world.Eventually(ctx, 10*time.Second, "nothing pending or queued", func(context.Context) (bool, error) {
		w.mu.Lock()
		n := len(w.pending)
		w.mu.Unlock()
		return n == 0 && w.queue.Len() == 0, nil
	}); err != nil {
		t.Error(err)
	}
	cancel()
	<-done
	want := map[string]bool{
		events.PodUpdated + " " + events.DeriveID(events.PodStateKey(p12), events.PodUpdated, ""):                    true,
		events.ContainerRestarted + " " + events.DeriveID(events.PodStateKey(p12), events.ContainerRestarted, "app"): true,
		events.PodUpdated + " " + events.DeriveID(events.PodStateKey(other), events.PodUpdated, ""):                  true,
	}
	if len(out.ids) != len(want) {
		t.Fatalf("published %d events %v; want %d: the pod's latest pod.updated, its container.restarted, the other pod's pod.updated", len(out.ids), out.ids, len(want))
	}
	for _, id := range out.ids {
		if !want[id] {
			t.Errorf("published %s; want only %v", id, want)
		}
	}
}

// BenchmarkUpdatesPileUp is the watcher's cost of a pod's updates that
// pile up before it publishes (five, then one pod.updated goes out).
func BenchmarkUpdatesPileUp(b *testing.B) {
	client := fake.NewClientset()
	inf := informers.NewSharedInformerFactory(client, 0).Core().V1().Pods().Informer()
	out := &published{}
	w, err := New(inf, client, out, Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	var pods []*corev1.Pod
	for i := range 5 {
		p := pod(strconv.Itoa(10+i), active, 0, "containerd://a")
		if i%2 == 1 { // a change that bears: the check fails, then waits again
			p = waiting(p, "ErrImagePull")
		}
		pods = append(pods, p)
	}
	for b.Loop() {
		for i, p := range pods {
			if i == 0 {
				w.observe(nil, p)
			} else {
				w.observe(pods[i-1], p)
			}
		}
		it, _ := w.queue.Get()
		if err := w.publish(b.Context(), it.key); err != nil {
			b.Fatal(err)
		}
		w.queue.Done(it)
		out.ids = out.ids[:0]
	}
}
