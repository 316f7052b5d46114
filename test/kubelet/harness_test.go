package kubelet

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// memResolver is an in-memory registry: reference → image.
type memResolver map[string]Image

func (m memResolver) Resolve(_ context.Context, ref string) (Image, error) {
	img, ok := m[ref]
	if !ok {
		return Image{}, fmt.Errorf("%s: not found", ref)
	}
	return img, nil
}

// fakeHost is a node for the pure lifecycle tests: in-memory registry,
// recorded events, sequential container IDs.
type fakeHost struct {
	reg    memResolver
	cache  *imageCache
	events []string // "reason: message"
	ids    int
}

func newFakeHost(reg memResolver) *fakeHost {
	return &fakeHost{reg: reg, cache: newImageCache()}
}

func (h *fakeHost) resolve(ctx context.Context, ref string) (Image, error) {
	return h.reg.Resolve(ctx, ref)
}
func (h *fakeHost) images() *imageCache    { return h.cache }
func (h *fakeHost) newContainerID() string { h.ids++; return fmt.Sprintf("containerd://%064d", h.ids) }
func (h *fakeHost) record(_ *corev1.ObjectReference, _, reason, msg string) {
	h.events = append(h.events, reason+": "+msg)
}

// sim drives one pod on a fakeHost with a simulated clock.
type sim struct {
	t   *testing.T
	h   *fakeHost
	pod *corev1.Pod
	rt  *podRuntime
	now time.Time
	tm  Timings
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newSim(t *testing.T, reg memResolver, pod *corev1.Pod) *sim {
	pod.UID, pod.Generation = "uid-1", 1
	return &sim{t: t, h: newFakeHost(reg), pod: pod, rt: newPodRuntime(pod.UID, t0), now: t0, tm: FastTimings()}
}

// until advances the clock from deadline to deadline until cond holds
// for the status (or fails the test after limit of simulated time).
func (s *sim) until(what string, limit time.Duration, cond func(corev1.PodStatus) bool) corev1.PodStatus {
	s.t.Helper()
	end := s.now.Add(limit)
	for {
		sy := &syncer{ctx: context.Background(), h: s.h, t: s.tm, pod: s.pod, now: s.now}
		next := sy.advance(s.rt)
		st := podStatus(s.pod, s.rt, "172.18.0.2", s.now)
		s.pod.Status = st
		if cond(st) {
			return st
		}
		if next.IsZero() || next.After(end) {
			s.t.Fatalf("%s: not reached by %v (next %v); status:\n%+v\nevents: %q", what, limit, next.Sub(s.now), st, s.h.events)
		}
		s.now = next
	}
}

// setImage changes a container's spec image, as a pod patch does.
func (s *sim) setImage(name, image string) {
	for _, list := range [][]corev1.Container{s.pod.Spec.InitContainers, s.pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				list[i].Image = image
			}
		}
	}
	s.pod.Generation++
}

func testPod(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec:       corev1.PodSpec{Containers: containers, RestartPolicy: corev1.RestartPolicyAlways},
	}
}

func ctrSpec(name, image string) corev1.Container {
	return corev1.Container{Name: name, Image: image, ImagePullPolicy: corev1.PullIfNotPresent}
}

func statusOfName(st corev1.PodStatus, name string) corev1.ContainerStatus {
	for _, l := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		if s, ok := statusOf(l, name); ok {
			return s
		}
	}
	return corev1.ContainerStatus{}
}

func ready(st corev1.PodStatus) bool {
	c := findCondition(st.Conditions, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func waitingOf(st corev1.PodStatus, name string) string {
	if w := statusOfName(st, name).State.Waiting; w != nil {
		return w.Reason
	}
	return ""
}

func countEvents(events []string, prefix string) int {
	n := 0
	for _, e := range events {
		if len(e) >= len(prefix) && e[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}
