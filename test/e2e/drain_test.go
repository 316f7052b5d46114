package e2e_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/inplace-dev/inplace/test/world"
)

// A gated pod behind a Service is patched only once it is out of service:
// its Ready condition no longer True and its EndpointSlice endpoint no
// longer ready. The real kubelet takes up to a second to honour a gate
// set False, so a patch sent right after the gate (grace 0) would restart
// a container that still receives traffic (OpenKruise #2276). The test
// watches the pods and the Service's EndpointSlices and checks, at each
// patch, the state both had just before it (resourceVersions are etcd
// revisions, ordered across resources).
func TestGatedPodLeavesServiceBeforeItsPatch(t *testing.T) {
	e := newEnv(t)
	e.push("front", "1.0.0")
	const n = 6
	e.service("front")
	e.deploy(workload{name: "front", replicas: n, image: e.ref("front", "1.0.0"), gate: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}})
	e.waitReadyEndpoints("front", n)
	tl := e.watchTimeline("front")
	digest := e.push("front", "1.1.0")
	e.waitAllOn("front", n, digest, 4*time.Minute)
	patches, violations := tl.check(e.ref("front", "1.0.0"))
	if patches != n {
		t.Errorf("saw %d patches of %d pods", patches, n)
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// service creates a ClusterIP Service selecting app.
func (e *env) service(app string) {
	e.t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: e.ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := e.w.Client().CoreV1().Services(e.ns).Create(e.t.Context(), svc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// waitReadyEndpoints waits until the Service's EndpointSlices list n ready endpoints.
func (e *env) waitReadyEndpoints(svc string, n int) {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), time.Minute, fmt.Sprintf("%d ready endpoints of %s", n, svc), func(ctx context.Context) (bool, error) {
		list, err := e.w.Client().DiscoveryV1().EndpointSlices(e.ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, s := range list.Items {
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
					ready++
				}
			}
		}
		return ready == n, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// timeline records every watch event of an app's pods and of its Service's
// EndpointSlices.
type timeline struct {
	mu     sync.Mutex
	events []watch.Event
	stops  []func()
}

func (e *env) watchTimeline(app string) *timeline {
	e.t.Helper()
	tl := &timeline{}
	ctx, cancel := context.WithCancel(e.t.Context())
	pods, err := e.w.Client().CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	slices, err := e.w.Client().DiscoveryV1().EndpointSlices(e.ns).Watch(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, w := range []watch.Interface{pods, slices} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range w.ResultChan() {
				tl.mu.Lock()
				tl.events = append(tl.events, ev)
				tl.mu.Unlock()
			}
		}()
	}
	tl.stops = []func(){cancel, wg.Wait}
	e.t.Cleanup(tl.stop)
	return tl
}

func (tl *timeline) stop() {
	for _, f := range tl.stops {
		f()
	}
	tl.stops = nil
}

func rv(obj runtime.Object) int64 {
	m, err := metav1.Object(nil), error(nil)
	switch o := obj.(type) {
	case *corev1.Pod:
		m = o
	case *discoveryv1.EndpointSlice:
		m = o
	default:
		return -1
	}
	n, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// check replays the timeline in resourceVersion order and returns how many
// pods were seen patched away from oldImage and every patch made while the
// pod was still Ready or a ready endpoint.
func (tl *timeline) check(oldImage string) (patches int, violations []string) {
	tl.stop()
	evs := append([]watch.Event(nil), tl.events...)
	sort.SliceStable(evs, func(i, j int) bool { return rv(evs[i].Object) < rv(evs[j].Object) })
	readyEndpoint := map[string]map[types.UID]bool{} // slice -> pod uid -> ready
	image := map[types.UID]string{}
	for _, ev := range evs {
		switch o := ev.Object.(type) {
		case *discoveryv1.EndpointSlice:
			eps := map[types.UID]bool{}
			if ev.Type != watch.Deleted {
				for _, ep := range o.Endpoints {
					if ep.TargetRef != nil {
						eps[ep.TargetRef.UID] = ep.Conditions.Ready == nil || *ep.Conditions.Ready
					}
				}
			}
			readyEndpoint[o.Name] = eps
		case *corev1.Pod:
			img := o.Spec.Containers[0].Image
			prev, seen := image[o.UID]
			image[o.UID] = img
			if !seen || prev != oldImage || img == oldImage {
				continue
			}
			patches++
			if world.PodReady(o) {
				violations = append(violations, fmt.Sprintf("pod %s patched at resourceVersion %s while Ready", o.Name, o.ResourceVersion))
			}
			for slice, eps := range readyEndpoint {
				if eps[o.UID] {
					violations = append(violations, fmt.Sprintf("pod %s patched at resourceVersion %s while a ready endpoint in EndpointSlice %s",
						o.Name, o.ResourceVersion, slice))
				}
			}
		}
	}
	return patches, violations
}
