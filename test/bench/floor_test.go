package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The floor opens a pod's gate when the kubelet has taken its new image
// up, as verify does: the generation with that image observed, or, where
// the kubelet reports no generation, the container restarted onto it.
func TestTakenUp(t *testing.T) {
	const image, digest = "r.test/app:1.1.0@sha256:new", "sha256:new"
	pod := func(specImage string, gen, observed int64, imageID string, restarts int32) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: specImage}}},
			Status: corev1.PodStatus{ObservedGeneration: observed, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", ImageID: imageID, RestartCount: restarts}}}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"not patched as the watch sees it", pod("r.test/app:1.0.0", 1, 1, "r.test/app@sha256:old", 0), false},
		{"patched, not observed", pod(image, 2, 1, "r.test/app@sha256:old", 0), false},
		{"observed, old container still running", pod(image, 2, 2, "r.test/app@sha256:old", 0), true},
		{"no generation reported, not restarted", pod(image, 2, 0, "r.test/app@sha256:old", 0), false},
		{"no generation reported, restarted onto it", pod(image, 2, 0, "r.test/app@"+digest, 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := takenUp(image, digest)(tt.pod); got != tt.want {
				t.Errorf("takenUp = %v, want %v", got, tt.want)
			}
		})
	}
}

// The floor restarts pods in compute-spec's order for a Deployment: spread
// over the nodes, so no batch follows one on the same node while another
// node has a pod left.
func TestSpreadOverNodes(t *testing.T) {
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	pods := []*corev1.Pod{pod("app-d", "n1"), pod("app-a", "n0"), pod("app-e", "n2"), pod("app-c", "n1"),
		pod("app-b", "n0"), pod("app-f", "n1")}
	var got []string
	for _, p := range spreadOverNodes(pods) {
		got = append(got, p.Name+"@"+p.Spec.NodeName)
	}
	want := []string{"app-a@n0", "app-c@n1", "app-e@n2", "app-b@n0", "app-d@n1", "app-f@n1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// Where the image is not on the nodes, the floor pulls ahead only on the
// nodes no pod of the first batch runs on, each once: the first batch's
// kubelets pull in their own sync.
func TestAheadNodes(t *testing.T) {
	on := func(nodes ...string) []*corev1.Pod {
		var out []*corev1.Pod
		for _, n := range nodes {
			out = append(out, &corev1.Pod{Spec: corev1.PodSpec{NodeName: n}})
		}
		return out
	}
	tests := []struct {
		name        string
		first, rest []*corev1.Pod
		want        []string
	}{
		{"every node in the first batch", on("n0", "n1", "n2"), on("n0", "n1", "n2"), nil},
		{"one node only later", on("n0", "n1"), on("n2", "n0", "n2"), []string{"n2"}},
		{"an unscheduled pod", on("n0"), on(""), nil},
		{"one batch", on("n0", "n1"), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, aheadNodes(tt.first, tt.rest)); diff != "" {
				t.Errorf("aheadNodes (-want +got):\n%s", diff)
			}
		})
	}
}

// The uncached Deployment and the StatefulSet with PVCs have a floor run,
// so a goal below what the kubelet alone reaches says so beside it.
func TestUncachedScenariosHaveAFloor(t *testing.T) {
	r := &report{Scenarios: scenarios(options{deployPods: 12, stsPods: 4})}
	for _, sc := range r.Scenarios {
		if !slices.Contains(sc.kinds(), floorRun) {
			t.Errorf("%s runs %v; want a floor run", sc.Name, sc.kinds())
		}
	}
	r.Rollouts = []rollout{
		{Scenario: "sts-pvc", Run: inPlace, Pods: 4, Seconds: 16},
		{Scenario: "sts-pvc", Run: nativeSame, Pods: 4, Seconds: 50},
		{Scenario: "sts-pvc", Run: floorRun, Pods: 4, Seconds: 14.5},
	}
	sts := targetNamed(t, r.targets(), "StatefulSet with a PVC per pod: in place vs the native rolling update (same")
	want := "the goal is below the kubelet's floor: an ideal in-place controller (the kubelet alone) took 14.5s, 0.29x the native 50.0s, " +
		"against the goal of 0.25x; in place took 16.0s, +1.5s over that floor; "
	if !strings.Contains(sts.Where, want) {
		t.Errorf("where the time goes: want %q in\n%s", want, sts.Where)
	}
}
