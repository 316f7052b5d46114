package bench

import (
	"fmt"
	"log/slog"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/history"
	"github.com/inplace-dev/inplace/pkg/imageref"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

const pods = 30

// deployment creates n pods of image with budget maxUnavailable and waits.
func deployment(b *testing.B, w *world.World, ns, name, image string, n int32, ann map[string]string) {
	b.Helper()
	labels := map[string]string{"app": name}
	zero, mu := intstr.FromInt32(0), intstr.FromString("10%")
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: ann},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &mu, MaxSurge: &zero}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}}}
	if _, err := w.Client().AppsV1().Deployments(ns).Create(b.Context(), d, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := world.WaitPods(b.Context(), w.Client(), ns, "app="+name, 3*time.Minute, "Ready", world.AllReady(int(n))); err != nil {
		b.Fatal(err)
	}
}

// allOn waits until n pods of app run digest and are Ready.
func allOn(b *testing.B, w *world.World, ns, app string, n int, digest string) {
	b.Helper()
	_, err := world.WaitPods(b.Context(), w.Client(), ns, "app="+app, 5*time.Minute, "on the new digest", func(ps []corev1.Pod) bool {
		on := 0
		for _, p := range ps {
			cs := world.ContainerStatus(&p, "app")
			if p.DeletionTimestamp == nil && cs != nil && imageref.DigestOf(cs.ImageID) == digest && world.PodReady(&p) {
				on++
			}
		}
		return on == n && len(ps) == n
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRollout: 30 pods moved to a new image, max-unavailable 10%
// (3 pods), in place through the whole chain (a real push, its webhook,
// pre-pull, patch, verify, template sync) versus the Deployment
// controller's rolling update, which recreates every pod.
func BenchmarkRollout(b *testing.B) {
	w := world.Shared(b)
	b.Run("in-place", func(b *testing.B) {
		for range b.N {
			benchInPlace(b, w)
		}
	})
	b.Run("recreate", func(b *testing.B) {
		for range b.N {
			benchRecreate(b, w)
		}
	})
}

func benchInPlace(b *testing.B, w *world.World) {
	ns := w.NewNamespace(b)
	s, err := stack.Start(b.Context(), w, stack.Options{Dir: b.TempDir(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	repo := ns + "/app"
	if _, err := w.Registry.Push(b.Context(), repo, "1.0.0", imageOpts()...); err != nil {
		b.Fatal(err)
	}
	deployment(b, w, ns, "app", w.Registry.Host()+"/"+repo+":1.0.0", pods,
		map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "10%"})
	before, err := writes(b.Context(), w.Client())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	digest, err := w.Registry.Push(b.Context(), repo, "1.1.0", imageOpts()...)
	if err != nil {
		b.Fatal(err)
	}
	allOn(b, w, ns, "app", pods, digest)
	report(b, w, "in place", start, before)
	p50, p99 := podLatencies(b, s, ns)
	b.ReportMetric(p50.Seconds(), "p50-s/pod")
	b.ReportMetric(p99.Seconds(), "p99-s/pod")
}

// report prints a rollout's wall time, pods/s and API writes per pod since
// before was read.
func report(b *testing.B, w *world.World, label string, start time.Time, before map[string]float64) {
	b.Helper()
	took := time.Since(start)
	after, err := writes(b.Context(), w.Client())
	if err != nil {
		b.Fatal(err)
	}
	total, per := delta(before, after)
	b.ReportMetric(took.Seconds(), "s/rollout")
	b.ReportMetric(float64(pods)/took.Seconds(), "pods/s")
	b.ReportMetric(total/pods, "writes/pod")
	b.Logf("%s: %d pods in %s; API writes %v", label, pods, took.Round(time.Millisecond), per)
}

// podLatencies are the times from each pod's upgrade.planned to its
// upgrade.succeeded, as stored on the stream.
func podLatencies(b *testing.B, s *stack.Stack, ns string) (p50, p99 time.Duration) {
	b.Helper()
	hs, err := history.Open(b.Context(), s.Bus.JetStream(), s.Bus.Config().Stream)
	if err != nil {
		b.Fatal(err)
	}
	planned := map[string]time.Time{}
	var lat []time.Duration
	q := history.Query{Filter: history.Filter{Types: []string{events.Short(events.UpgradePlanned), events.Short(events.UpgradeSucceeded)}}}
	err = hs.Read(b.Context(), q, func(r history.Record) error {
		switch r.Event.Type() {
		case events.UpgradePlanned:
			planned[r.Event.Subject()] = r.Stored
		case events.UpgradeSucceeded:
			if t, ok := planned[r.Event.Subject()]; ok {
				lat = append(lat, r.Stored.Sub(t))
			}
		}
		return nil
	})
	if err != nil || len(lat) == 0 {
		b.Fatalf("latencies: %v (%d)", err, len(lat))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
}

func benchRecreate(b *testing.B, w *world.World) {
	ns := w.NewNamespace(b)
	repo := ns + "/app"
	if _, err := w.Registry.Push(b.Context(), repo, "1.0.0", imageOpts()...); err != nil {
		b.Fatal(err)
	}
	deployment(b, w, ns, "app", w.Registry.Host()+"/"+repo+":1.0.0", pods, nil)
	before, err := writes(b.Context(), w.Client())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	digest, err := w.Registry.Push(b.Context(), repo, "1.1.0", imageOpts()...)
	if err != nil {
		b.Fatal(err)
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`,
		w.Registry.Host()+"/"+repo+":1.1.0@"+digest)
	if _, err := w.Client().AppsV1().Deployments(ns).Patch(b.Context(), "app", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		b.Fatal(err)
	}
	allOn(b, w, ns, "app", pods, digest)
	report(b, w, "recreate", start, before)
}
