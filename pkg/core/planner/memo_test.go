package planner

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/policy"
)

func memoPodAt(name, rv, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv},
		Spec:       corev1.PodSpec{NodeName: "node-0", Containers: []corev1.Container{{Name: "app", Image: image}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: image,
			ImageID: "registry.example/shop/web@sha256:" + strings.Repeat("a", 64),
			State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}

// Each outcome of a rollout observes every pod of its workload again; a
// pod whose object did not change (same resourceVersion) is not planned
// again, one that changed is, and so is every pod for another rollout,
// another policy, or another pod of the same name. Pods that left are not
// kept.
func TestPlansAreReusedWhileThePodIsUnchanged(t *testing.T) {
	pol, err := policy.Parse("semver:minor")
	if err != nil {
		t.Fatal(err)
	}
	push := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "1.3.0"}}
	var m Memo
	a, b := memoPodAt("web-a", "10", "registry.example/shop/web:1.2.0"), memoPodAt("web-b", "11", "registry.example/shop/web:1.2.0")
	first := m.Candidates("Deployment/shop/web", "u-1", "Deployment", []*corev1.Pod{a, b}, push, pol)
	if len(first) != 2 || len(first[0].Containers) != 1 || len(first[1].Containers) != 1 {
		t.Fatalf("first observation: %+v; want both pods planned", first)
	}
	// The same objects, as the cache gives them again: reused. (A pod's
	// content never changes without a new resourceVersion; here it does,
	// to show which answer came from the memo.)
	a2 := memoPodAt("web-a", "10", "registry.example/shop/web:1.3.0")
	b2 := memoPodAt("web-b", "12", "registry.example/shop/web:1.3.0")
	got := m.Candidates("Deployment/shop/web", "u-1", "Deployment", []*corev1.Pod{a2, b2}, push, pol)
	if len(got) != 2 || got[0].Pod.Name != "web-a" || got[1].Pod.Name != "web-b" {
		t.Fatalf("second observation: %+v; want web-a then web-b", got)
	}
	if len(got[0].Containers) != 1 {
		t.Errorf("web-a at the same resourceVersion was planned again: %+v; want the memo's plan", got[0])
	}
	if len(got[1].Containers) != 0 {
		t.Errorf("web-b at a new resourceVersion kept its old plan: %+v; want it planned again (nothing to do)", got[1])
	}
	for _, c := range []struct {
		name, upgradeID, pol string
	}{{"another rollout", "u-2", "semver:minor"}, {"another policy", "u-1", "semver:major"}} {
		p, err := policy.Parse(c.pol)
		if err != nil {
			t.Fatal(err)
		}
		got := m.Candidates("Deployment/shop/web", c.upgradeID, "Deployment", []*corev1.Pod{a2}, push, p)
		if len(got) != 1 || len(got[0].Containers) != 0 {
			t.Errorf("%s: %+v; want web-a planned again from its object (nothing to do)", c.name, got)
		}
	}
	m.Candidates("Deployment/shop/web", "u-2", "Deployment", []*corev1.Pod{a2}, push, pol)
	if n := len(m.by["Deployment/shop/web"].pods); n != 1 {
		t.Errorf("the memo keeps %d pods after web-b left; want 1", n)
	}
}

// An observation after one pod changed, then the same pods again: the
// second returns the first's slice (the changed pod is remembered at its
// place), and neither changes the slice an earlier observation returned.
func TestMemoRemembersTheChangedPodAtItsPlace(t *testing.T) {
	pol, err := policy.Parse("semver:minor")
	if err != nil {
		t.Fatal(err)
	}
	push := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "1.3.0"}}
	var m Memo
	pods := []*corev1.Pod{memoPodAt("web-a", "10", "registry.example/shop/web:1.2.0"), memoPodAt("web-b", "11", "registry.example/shop/web:1.2.0")}
	first := m.Candidates("Deployment/shop/web", "u-1", "Deployment", pods, push, pol)
	pods = []*corev1.Pod{pods[0], memoPodAt("web-b", "12", "registry.example/shop/web:1.3.0")}
	second := m.Candidates("Deployment/shop/web", "u-1", "Deployment", pods, push, pol)
	third := m.Candidates("Deployment/shop/web", "u-1", "Deployment", slices.Clone(pods), push, pol)
	if len(second) != 2 || len(second[1].Containers) != 0 {
		t.Fatalf("after web-b changed: %+v; want web-b with nothing to do", second)
	}
	if &third[0] != &second[0] {
		t.Error("the same pods observed again gave a new slice; want the last observation's")
	}
	if len(first[1].Containers) != 1 {
		t.Errorf("the first observation's web-b changed to %+v; want its plan as it was", first[1])
	}
}
