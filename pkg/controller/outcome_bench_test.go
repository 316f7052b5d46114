package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/planner"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// benchCache is a workload of pods in memory (kube.Cache's reads),
// counting the reads of its pods.
type benchCache struct {
	w     kube.Workload
	pods  []*corev1.Pod
	reads atomic.Int64
}

func (c *benchCache) Get(events.ObjectRef) (kube.Workload, bool, error) { return c.w, true, nil }

func (c *benchCache) PodsOf(events.ObjectRef) ([]*corev1.Pod, error) {
	c.reads.Add(1)
	return c.pods, nil
}

// benchStore is a record in memory (bus.KV's compare-and-swap, one writer).
type benchStore struct {
	mu  sync.Mutex
	raw []byte
	rev uint64
}

func (s *benchStore) Get(context.Context, string) ([]byte, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw, s.rev, nil
}

func (s *benchStore) Update(_ context.Context, _ string, fn func([]byte) ([]byte, error)) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := fn(s.raw)
	if err != nil {
		return nil, err
	}
	s.raw, s.rev = raw, s.rev+1
	return raw, nil
}

func (s *benchStore) Keys(context.Context) ([]string, error) { return nil, nil }

func benchPod(i int, rv int, image string) *corev1.Pod {
	name := fmt.Sprintf("web-%04d", i)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), ResourceVersion: strconv.Itoa(rv)},
		Spec:       corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%5), Containers: []corev1.Container{{Name: "app", Image: image}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: image, ImageID: "r.example/shop/web@sha256:0000",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}

// benchWorkload is a Deployment "web" of n pods in a benchCache, its
// record in a benchStore, and the controller over both.
type benchWorkload struct {
	ref   events.ObjectRef
	n     int
	cache *benchCache
	store *benchStore
	ctl   *Rollouts
}

func newBenchWorkload(n int) *benchWorkload {
	ref := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	cache := &benchCache{w: kube.Workload{Ref: ref, Replicas: n, Meta: metav1.ObjectMeta{Name: "web", Namespace: "shop",
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}}}}
	store := &benchStore{}
	ctl := New(Deps{Cache: cache, Store: store, Decoded: &rollout.Decoded{},
		Defaults: config.NewStore(config.StandardDefaults(), nil)})
	return &benchWorkload{ref: ref, n: n, cache: cache, store: store, ctl: ctl}
}

// benchPush is the push every bench rollout moves the pods to.
var benchPush = events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "r.example", Repository: "shop/web", Tag: "1.3.0"}}

// onImage makes every pod of w anew on image, their resourceVersions
// counted on from *rv.
func (w *benchWorkload) onImage(image string, rv *int) {
	w.cache.pods = make([]*corev1.Pod, w.n)
	for i := range w.cache.pods {
		*rv++
		w.cache.pods[i] = benchPod(i, *rv, image)
	}
}

// planned is rollout upgradeID of benchPush begun on w's pods, every pod
// planned (budget n); not stored.
func (w *benchWorkload) planned(upgradeID string) *rollout.Rollout {
	pol := TargetOf(w.cache.w, config.StandardDefaults()).Options.Policy
	r := rollout.Begin(nil, upgradeID, w.ref, benchPush, rollout.Options{Budget: w.n}, time.Now())
	rollout.Plan(r, w.ctl.plans.Candidates(rollout.Key(w.ref), r.UpgradeID, w.ref.Kind, w.cache.pods, benchPush, pol), "push", false, time.Now())
	return r
}

// recordSuccess is the change of the upgrade.succeeded of pod name that
// input id brings.
func recordSuccess(name, id string) func(*rollout.Rollout) {
	return func(r *rollout.Rollout) {
		p := r.Pods[name]
		o := events.OutcomeData{Plan: events.Plan{UpgradeID: p.UpgradeID, Pod: events.PodRef{Namespace: "shop", Name: name, UID: p.UID}},
			Outcome: events.OutcomeSucceeded}
		rollout.Record(r, events.UpgradeSucceeded, o, id, time.Now())
	}
}

// BenchmarkOutcome is compute-spec's work for one pod's upgrade.succeeded
// in a rollout of n pods all in flight (max-unavailable 100%, as the scale
// run): observe the workload, record the outcome, replan, encode and write
// the record (each outcome its own write). Its outcomes' pods are Ready on
// the new image.
func BenchmarkOutcome(b *testing.B) {
	const old, target = "r.example/shop/web:1.2.0", "r.example/shop/web:1.3.0"
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			w := newBenchWorkload(n)
			ref, cache, store, ctl := w.ref, w.cache, w.store, w.ctl
			ctl.commits.wait = func(context.Context, string, time.Duration) {}
			rv := 0
			begin := func() {
				w.onImage(old, &rv)
				store.raw, store.rev = mustMarshal(b, w.planned(fmt.Sprint("u-", rv))), store.rev+1
			}
			begin()
			for i := 0; b.Loop(); i++ {
				k := i % n
				if k == 0 && i > 0 {
					b.StopTimer()
					begin()
					b.StartTimer()
				}
				rv++
				cache.pods[k] = benchPod(k, rv, target)
				in := cloudevents.NewEvent()
				in.SetID(fmt.Sprint("outcome-", i))
				name := cache.pods[k].Name
				_, _, err := ctl.replanChecked(b.Context(), in, ref, nil, recordSuccess(name, in.ID()), false)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQueuedOutcomes is compute-spec's work for 8 outcomes of a
// rollout of 1,000 pods that queue for one write (they arrived within the
// spacing): each is observed, recorded and planned, and the record is
// written once for them. ns/op is per outcome.
func BenchmarkQueuedOutcomes(b *testing.B) {
	const old, target, n, k = "r.example/shop/web:1.2.0", "r.example/shop/web:1.3.0", 1000, 8
	w := newBenchWorkload(n)
	ref, cache, store, ctl := w.ref, w.cache, w.store, w.ctl
	key := rollout.Key(ref)
	queued := func() int {
		ctl.commits.mu.Lock()
		defer ctl.commits.mu.Unlock()
		return len(ctl.commits.queue[key])
	}
	ctl.commits.wrote(key, time.Millisecond, 0) // every write waits: here, for the k outcomes
	ctl.commits.wait = func(context.Context, string, time.Duration) {
		for queued() < k {
			time.Sleep(10 * time.Microsecond)
		}
	}
	rv := 0
	begin := func() {
		w.onImage(old, &rv)
		store.raw, store.rev = mustMarshal(b, w.planned(fmt.Sprint("u-", rv))), store.rev+1
	}
	begin()
	writes := store.rev
	outcomes := 0
	for i := 0; b.Loop(); i++ {
		if (i+1)*k > n*(outcomes/n+1) && i > 0 {
			b.StopTimer()
			begin()
			writes++
			b.StartTimer()
		}
		names := make([]string, k)
		for j := range names {
			at := (i*k + j) % n
			rv++
			cache.pods[at] = benchPod(at, rv, target)
			names[j] = cache.pods[at].Name
		}
		var wg sync.WaitGroup
		for j, name := range names {
			in := cloudevents.NewEvent()
			in.SetID(fmt.Sprint("outcome-", i, "-", j))
			wg.Go(func() {
				_, _, err := ctl.replanChecked(b.Context(), in, ref, nil, recordSuccess(name, in.ID()), false)
				if err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		outcomes += k
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(outcomes), "ns/outcome")
	b.ReportMetric(float64(store.rev-writes)/float64(outcomes), "writes/outcome")
}

// BenchmarkDuplicateOutcome is compute-spec's work for an upgrade.succeeded
// already recorded (another replica's verify reported the same success)
// in a rollout of n pods, each pod in flight but the one reported: confirm
// finds nothing to record, and the outcome only wakes the rollout up.
func BenchmarkDuplicateOutcome(b *testing.B) {
	const old, target = "r.example/shop/web:1.2.0", "r.example/shop/web:1.3.0"
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			w := newBenchWorkload(n)
			ref, cache, store, ctl := w.ref, w.cache, w.store, w.ctl
			ctl.commits.wait = func(context.Context, string, time.Duration) {}
			rv := 0
			w.onImage(old, &rv)
			r := w.planned("u-1")
			cache.pods[0] = benchPod(0, n+1, target)
			p := r.Pods[cache.pods[0].Name]
			o := events.OutcomeData{Plan: planner.PodPlan(r, p), Outcome: events.OutcomeSucceeded}
			rollout.Record(r, events.UpgradeSucceeded, o, "first", time.Now())
			store.raw, store.rev = mustMarshal(b, r), 1
			// The record as this process last wrote it (the common case).
			if _, _, err := ctl.replanChecked(b.Context(), cloudevents.NewEvent(), ref, nil, func(*rollout.Rollout) {}, false); err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				in, err := events.New(fmt.Sprint("again-", i), events.UpgradeSucceeded, events.Source("verify"), p.Name, o)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ctl.onOutcome(b.Context(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(store.rev-2)/float64(b.N), "writes/op")
		})
	}
}

func mustMarshal(b *testing.B, r *rollout.Rollout) []byte {
	raw, err := json.Marshal(r)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
