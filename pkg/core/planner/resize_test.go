package planner

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/pkg/core/resize"
)

func resizePod(name, cpu string, running bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "r.example/web:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	cs := corev1.ContainerStatus{Name: "app", ImageID: "r.example/web@sha256:aa"}
	if running {
		cs.State.Running = &corev1.ContainerStateRunning{}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	return p
}

// TestResizeCandidates: a running container is planned from the resources
// it asks now to the request's, image unchanged; one that already asks
// them, is not running, or is not there is left out with the reason.
func TestResizeCandidates(t *testing.T) {
	ch, err := resize.Parse("500m", "")
	if err != nil {
		t.Fatal(err)
	}
	pods := []*corev1.Pod{resizePod("web-0", "100m", true), resizePod("web-1", "500m", true), resizePod("web-2", "100m", false)}
	cands := ResizeCandidates("Deployment", pods, []string{"app"}, ch)
	if len(cands) != 3 {
		t.Fatalf("got %d Candidates", len(cands))
	}
	c := cands[0]
	if len(c.Containers) != 1 || c.Containers[0].Resources == nil {
		t.Fatalf("web-0 not planned: %+v", c)
	}
	cp := c.Containers[0]
	if cp.FromImage != cp.ToImage || cp.ToImage != "r.example/web:1" {
		t.Errorf("a resize changes the image: %s -> %s", cp.FromImage, cp.ToImage)
	}
	if got, want := resize.String(cp.Resources.From), "cpu 100m/-, memory -/-"; got != want {
		t.Errorf("from = %s, want %s", got, want)
	}
	if got, want := resize.String(cp.Resources.To), "cpu 500m/-, memory -/-"; got != want {
		t.Errorf("to = %s, want %s", got, want)
	}
	for i, want := range map[int]string{1: "already asks", 2: "not running"} {
		if len(cands[i].Containers) != 0 || !strings.Contains(cands[i].Why, want) {
			t.Errorf("%s: containers %v, why %q; want none, %q", pods[i].Name, cands[i].Containers, cands[i].Why, want)
		}
	}
	missing := ResizeCandidates("Deployment", pods[:1], []string{"sidecar"}, ch)
	if len(missing[0].Containers) != 0 || !strings.Contains(missing[0].Why, `no container "sidecar"`) {
		t.Errorf("a missing container: %+v", missing[0])
	}
}
