package kubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
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
	alloc  corev1.ResourceList // nil: cpu 32, memory 128Gi
}

func newFakeHost(reg memResolver) *fakeHost {
	return &fakeHost{reg: reg, cache: newImageCache()}
}

func (h *fakeHost) resolve(ctx context.Context, ref string) (Image, error) {
	return h.reg.Resolve(ctx, ref)
}
func (h *fakeHost) images() *imageCache    { return h.cache }
func (h *fakeHost) newContainerID() string { h.ids++; return fmt.Sprintf("containerd://%064d", h.ids) }
func (h *fakeHost) hostIP() string         { return "172.18.0.2" }
func (h *fakeHost) allocatable() corev1.ResourceList {
	if h.alloc != nil {
		return h.alloc
	}
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi")}
}
func (h *fakeHost) podIP(pod *corev1.Pod) string { return "10.244.0.2" }
func (h *fakeHost) record(_ *corev1.ObjectReference, _, reason, msg string) {
	h.events = append(h.events, reason+": "+msg)
}

// sim drives one pod's worker on a fakeHost with a simulated clock, and
// plays the API server: each status the worker writes (merged as the
// status manager merges it) becomes the pod's status and is recorded.
type sim struct {
	t       *testing.T
	h       *fakeHost
	pod     *corev1.Pod
	w       *worker
	now     time.Time
	tm      Timings
	writes  []corev1.PodStatus // every status written, in order
	deleted bool
}

// t0 is the node's first relist; relists follow every RelistPeriod.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newSim(t *testing.T, reg memResolver, pod *corev1.Pod) *sim {
	return newSimWith(t, reg, pod, FastTimings())
}

func newSimWith(t *testing.T, reg memResolver, pod *corev1.Pod, tm Timings) *sim {
	pod.UID, pod.Generation = "uid-1", 1
	w := newWorker(newFakeHost(reg), tm, t0, pod.UID)
	w.jitter = func(d time.Duration) time.Duration { return d }
	return &sim{t: t, h: w.h.(*fakeHost), pod: pod, w: w, now: t0.Add(time.Millisecond), tm: tm}
}

// until advances the clock from event to event until cond holds for the
// pod's status as written (or fails the test after limit of simulated
// time).
func (s *sim) until(what string, limit time.Duration, cond func(corev1.PodStatus) bool) corev1.PodStatus {
	s.t.Helper()
	end := s.now.Add(limit)
	for {
		res := s.w.advance(context.Background(), s.pod, s.now)
		switch {
		case res.status != nil:
			merged := mergeStatus(s.pod.Status, *res.status, s.w.phase == terminated)
			if !equality.Semantic.DeepEqual(s.pod.Status, merged) {
				s.pod.Status = merged
				s.writes = append(s.writes, merged)
			}
			s.w.written()
			if cond(s.pod.Status) {
				return s.pod.Status
			}
			continue
		case res.delete:
			s.deleted = true
		}
		if cond(s.pod.Status) {
			return s.pod.Status
		}
		if res.next.IsZero() || res.next.After(end) || s.deleted {
			s.t.Fatalf("%s: not reached by %v (next %v); status:\n%s\nevents: %q", what, limit, res.next.Sub(s.now), shape(s.pod.Status), s.h.events)
		}
		s.now = res.next
	}
}

// shapesSince lists the shapes of the statuses written from write i on.
func (s *sim) shapesSince(i int) []string {
	var out []string
	for _, st := range s.writes[i:] {
		out = append(out, shape(st))
	}
	return out
}

// setImage changes a container's spec image, as a pod patch does (in a
// new object, as the informer delivers it).
func (s *sim) setImage(name, image string) {
	s.pod = s.pod.DeepCopy()
	for _, list := range [][]corev1.Container{s.pod.Spec.InitContainers, s.pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				list[i].Image = image
			}
		}
	}
	s.pod.Generation++
	s.w.poke()
}

// setCondition sets a condition others own, through the status
// subresource, as a controller does.
func (s *sim) setCondition(typ corev1.PodConditionType, status corev1.ConditionStatus) {
	old := s.pod
	s.pod = s.pod.DeepCopy()
	c := findCondition(s.pod.Status.Conditions, typ)
	if c == nil {
		s.pod.Status.Conditions = append(s.pod.Status.Conditions, corev1.PodCondition{Type: typ})
		c = &s.pod.Status.Conditions[len(s.pod.Status.Conditions)-1]
	}
	c.Status, c.LastTransitionTime = status, metav1.NewTime(s.now)
	if needsSync(old, s.pod) {
		s.w.poke()
	}
}

// shape is what a client sees of a status, without times and IDs (as the
// fidelity test compares it).
func shape(st corev1.PodStatus) string {
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	var ctrs []string
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, cs := range list {
			ctrs = append(ctrs, fmt.Sprintf("%s{%s ready=%v restarts=%d image=%s last=%s}", cs.Name,
				stateOf(cs.State), cs.Ready, cs.RestartCount, cs.Image, stateOf(cs.LastTerminationState)))
		}
	}
	return fmt.Sprintf("%s [%s] %s", st.Phase, strings.Join(conds, " "), strings.Join(ctrs, " "))
}

func stateOf(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		return "waiting:" + s.Waiting.Reason
	case s.Terminated != nil:
		return fmt.Sprintf("terminated:%s/%d", s.Terminated.Reason, s.Terminated.ExitCode)
	}
	return "-"
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
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}
