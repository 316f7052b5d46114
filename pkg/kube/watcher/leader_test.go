package watcher_test

import (
	"context"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube/watcher"
	"github.com/inplace-dev/inplace/test/world"
)

// replica is one process's pod watcher, on a NATS connection of its own.
type replica struct {
	name string
	rec  *recorder
	stop func() // cancels its context: the lease is released
	kill func() // closes its connection: the lease is left to expire
}

// startReplica runs a watcher on ns that publishes only while it holds the
// lease, as `inplace run` does.
func startReplica(t *testing.T, s *embednats.Server, client kubernetes.Interface, ns, name string, hold time.Duration) *replica {
	t.Helper()
	b, nc := bustest.Replica(t, s, name)
	leases, err := b.Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, rec: &recorder{bus: b, byID: map[string]cloudevents.Event{}}, kill: nc.Close}
	f := informers.NewSharedInformerFactoryWithOptions(client, time.Second, informers.WithNamespace(ns))
	leader := bus.Leader{Leases: leases, Name: "pod-watcher", Hold: hold}
	wt, err := watcher.New(f.Core().V1().Pods().Informer(), client, r.rec, watcher.Options{Leader: leader})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = wt.Run(ctx) }()
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%s: the informer of %v never synced", name, typ)
		}
	}
	r.stop = func() { cancel(); <-done }
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })
	return r
}

// asked is how many publishes r was asked for (taken or not).
func (r *replica) asked() int {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return len(r.rec.ids)
}

// TestOneWatcherPublishesAndAnotherTakesOver: of three replicas' watchers
// one publishes a pod's changes, the lease holder's; the others publish
// nothing. The holder stops (releasing the lease): another publishes the
// next change; that one is killed (its lease left to expire): the last one
// publishes the change after.
func TestOneWatcherPublishesAndAnotherTakesOver(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	s := bustest.Server(t)
	client := fntest.Identity(t, w, watcher.RBAC, ns)
	v1, v2 := fntest.Push(t, w, "watcher/lead", "v1"), fntest.Push(t, w, "watcher/lead", "v2")
	// Each pod's gate stays False (as patch-pod leaves it until verify's
	// last write): its upgrade stays in flight, each of its states a
	// pod.updated.
	var pods []*corev1.Pod
	for _, name := range []string{"one", "two", "three"} {
		p := fntest.RunPod(t, w, fntest.Pod(ns, name, v1.Ref, true))
		gate := inplace.GatePatch(p.UID, corev1.ConditionFalse, inplace.GateReasonStart, "test", time.Now())
		if _, err := w.Client().CoreV1().Pods(ns).Patch(t.Context(), p.Name, types.StrategicMergePatchType, gate, metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	const hold, resyncs = 5 * time.Second, 2500 * time.Millisecond
	rest := map[string]*replica{}
	for _, name := range []string{"a", "b", "c"} {
		rest[name] = startReplica(t, s, client, ns, name, hold)
	}

	// change upgrades pod to v2 and returns the replica that published
	// its final state; no other replica left was asked to publish anything.
	change := func(what string, pod *corev1.Pod) *replica {
		t.Helper()
		p := fntest.Get(t, w, pod)
		patch, err := inplace.Patch(p, fntest.Plan(t, p, "up-"+p.Name, v2), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Client().CoreV1().Pods(ns).Patch(t.Context(), p.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		final := fntest.WaitPod(t, w, p, "restarted on v2, its container ready", func(p *corev1.Pod) bool {
			cs := fntest.ContainerStatus(p)
			return cs.RestartCount == 1 && cs.ImageID == v2.ImageID && cs.Ready
		})
		id := events.DeriveID(events.PodStateKey(final), events.PodUpdated, "")
		var by *replica
		if err := world.Eventually(t.Context(), fntest.Timeout, what+": the final state of "+p.Name+" published", func(context.Context) (bool, error) {
			for _, r := range rest {
				r.rec.mu.Lock()
				_, ok := r.rec.byID[id]
				r.rec.mu.Unlock()
				if ok {
					by = r
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			t.Fatal(err)
		}
		// The others saw the same changes, and see every pod again at each
		// resync (every second): they would have published by now, or
		// within the next two.
		for end := time.Now().Add(resyncs); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			for _, r := range rest {
				if n := r.asked(); r != by && n != 0 {
					t.Fatalf("%s: %s, not the holder, was asked to publish %d events; want none (%s published)", what, r.name, n, by.name)
				}
			}
		}
		return by
	}

	first := change("three watchers", pods[0])
	t.Logf("%s leads", first.name)
	first.stop()
	delete(rest, first.name)
	second := change("the holder stopped", pods[1])
	t.Logf("%s took over from the stopped %s", second.name, first.name)
	second.kill()
	delete(rest, second.name)
	last := change("the holder killed", pods[2])
	t.Logf("%s took over from the killed %s", last.name, second.name)
}
