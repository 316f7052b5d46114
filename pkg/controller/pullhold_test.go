package controller_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/pulls"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/world"
)

// A pod waits for its node's pull only while a pull is under way there,
// and the pull's end moves it on: no wait ends by a deadline. The pod is
// opted in on a node no kubelet serves, so the test alone moves its
// pre-pull pod (the pod the node's pull would run in):
//   - the pull ends (the pre-pull pod's containers ran): the Waker plans
//     the pod;
//   - the pre-pull pod is removed before it pulled (another rollout's end
//     tidied it, a sweep): the Waker plans the pod, whose own pre-pull
//     pulls;
//   - no pull is under way and the node does not list the images (pre-pull
//     saw them pulled there moments ago and started none; the kubelet lists
//     at most 50 images): the push plans the pod at once.
//
// Without the change the last two held the pod until prepull-timeout (5
// minutes from the rollout's start): that is how `inplace undo
// statefulset/cart` planned cart-0 and then nothing for 3 minutes.
func TestAPodWaitsOnlyForAPullUnderWay(t *testing.T) {
	for _, c := range []struct {
		name string
		// prepull is whether a pull is under way at the push.
		prepull bool
		// then ends it, if any.
		then func(e *env, pod *corev1.Pod)
	}{
		{"the pull ends", true, func(e *env, pp *corev1.Pod) { e.pulled(pp) }},
		{"the pre-pull pod is removed", true, func(e *env, pp *corev1.Pod) {
			if err := e.W.Client().CoreV1().Pods(pp.Namespace).Delete(e.T.Context(), pp.Name, metav1.DeleteOptions{}); err != nil {
				e.T.Fatal(err)
			}
		}},
		{"no pull under way", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, pullNS := pullEnv(t)
			v1, d10 := e.Image("solo", "1.0.0")
			_, d11 := e.Image("solo", "1.1.0")
			node := e.lonelyNode()
			pod := e.podOn(node, "solo", v1, d10)
			images := []string{e.W.Registry.Host() + "/" + e.NS + "/solo:1.1.0@" + d11}
			var pp *corev1.Pod
			if c.prepull {
				pp = prepullOn(t, e.W, pullNS, node, images)
				e.prepullCached(pullNS, pp.Name)
			}
			published := make(chan cloudevents.Event, 16)
			w, err := controller.NewWaker(e.Ro, e.Cache, func(_ context.Context, ev cloudevents.Event) error {
				published <- ev
				return nil
			}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			go w.Run(t.Context())

			outs, err := e.Fn.Handle(t.Context(), e.Pushed("push-1", "solo", "1.1.0", d11))
			if k, _ := settle.Classify(err); err != nil && k != settle.Later {
				t.Fatalf("push: %v", err)
			}
			got := controllertest.Plans(t, outs)
			ref := events.ObjectRef{Kind: "Pod", Namespace: e.NS, Name: pod.Name}
			if !c.prepull {
				if len(got) != 1 {
					t.Fatalf("the push planned %v; want %s at once (no pull under way would wake it later)", keys(got), pod.Name)
				}
				return
			}
			if len(got) != 0 {
				t.Fatalf("the push planned %v while the node pulled its image", keys(got))
			}
			if r := e.stateOf(ref); r == nil || r.Pods[pod.Name] == nil || r.Pods[pod.Name].State != rollout.Pending {
				t.Fatalf("rollout %+v; want the pod Pending", r)
			}
			c.then(e, pp)
			select {
			case ev := <-published:
				p, err := events.As[events.Plan](ev)
				if err != nil || ev.Type() != events.UpgradePlanned || p.Pod.Name != pod.Name {
					t.Fatalf("published %s %+v %v; want %s planned", ev.Type(), p.Pod, err, pod.Name)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s not planned within a minute of its node's pull ending (prepull-timeout is 5m)", pod.Name)
			}
		})
	}
}

// lonelyNode is a Node no kubelet serves: its pods stay as the test
// writes them. It is removed with the test.
func (e *env) lonelyNode() string {
	e.T.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "lonely-" + e.NS}}
	if _, err := e.W.Client().CoreV1().Nodes().Create(e.T.Context(), n, metav1.CreateOptions{}); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		_ = e.W.Client().CoreV1().Nodes().Delete(context.WithoutCancel(e.T.Context()), n.Name, metav1.DeleteOptions{})
	})
	err := world.Eventually(e.T.Context(), 30*time.Second, "the cache sees node "+n.Name, func(context.Context) (bool, error) {
		_, ok := e.Cache.NodeImages(n.Name)
		return ok, nil
	})
	if err != nil {
		e.T.Fatal(err)
	}
	return n.Name
}

// podOn makes a bare pod opted in to minor upgrades on node, running
// image (digest), Ready, as a kubelet would report it.
func (e *env) podOn(node, name, image, digest string) *corev1.Pod {
	e.T.Helper()
	ctx := e.T.Context()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS,
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{controllertest.Container("app", image)}}}
	p, err := e.W.Client().CoreV1().Pods(e.NS).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	now := metav1.Now()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: image, Ready: true, Started: new(true),
			ImageID:     e.W.Registry.Host() + "/" + e.NS + "/" + name + "@" + digest,
			ContainerID: "containerd://" + name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	if p, err = e.W.Client().CoreV1().Pods(e.NS).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
	e.Cached(events.ObjectRef{Kind: "Pod", Namespace: e.NS, Name: name}, 1)
	return p
}

// pulled writes the pre-pull pod's containers as run, as the kubelet
// would once the pull ended.
func (e *env) pulled(pp *corev1.Pod) {
	e.T.Helper()
	p, err := e.W.Client().CoreV1().Pods(pp.Namespace).Get(e.T.Context(), pp.Name, metav1.GetOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	now := metav1.Now()
	p.Status.Phase = corev1.PodSucceeded
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: c.Image, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: now}}})
	}
	if _, err := e.W.Client().CoreV1().Pods(p.Namespace).UpdateStatus(e.T.Context(), p, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

// prepullCached waits until compute-spec's cache shows the pre-pull pod.
func (e *env) prepullCached(ns, name string) {
	e.T.Helper()
	err := world.Eventually(e.T.Context(), 30*time.Second, "the cache sees pre-pull pod "+name, func(context.Context) (bool, error) {
		pods, err := e.Cache.PrepullPods(ns)
		for _, p := range pods {
			if p.Name == name && pulls.IsPrepull(p) {
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		e.T.Fatal(err)
	}
}

func (e *env) stateOf(ref events.ObjectRef) *rollout.Rollout {
	e.T.Helper()
	return e.State(ref.Kind, ref.Name)
}
