package resize

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rr(reqCPU, limCPU string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{}
	if reqCPU != "" {
		r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(reqCPU)}
	}
	if limCPU != "" {
		r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limCPU)}
	}
	return r
}

func TestParse(t *testing.T) {
	ch, err := Parse("500m", "256Mi")
	if err != nil || ch.CPU.String() != "500m" || ch.Memory.String() != "256Mi" {
		t.Fatalf("Parse = %+v, %v", ch, err)
	}
	for _, bad := range [][2]string{{"", ""}, {"lots", ""}, {"", "-1Mi"}, {"0", ""}} {
		if _, err := Parse(bad[0], bad[1]); err == nil {
			t.Errorf("Parse(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func TestDesired(t *testing.T) {
	q := resource.MustParse("500m")
	tests := []struct {
		name     string
		cur      corev1.ResourceRequirements
		req, lim string
	}{
		{"request only", rr("100m", ""), "500m", ""},
		{"limit above stays", rr("100m", "1"), "500m", "1"},
		{"guaranteed stays guaranteed", rr("100m", "100m"), "500m", "500m"},
		{"limit below follows the request", rr("100m", "200m"), "500m", "500m"},
		{"no request yet", rr("", ""), "500m", ""},
	}
	for _, tt := range tests {
		got := Desired(tt.cur, Change{CPU: &q})
		want := rr(tt.req, tt.lim)
		if !Equal(&got, &want) {
			t.Errorf("%s: Desired = %s, want %s", tt.name, String(got), String(want))
		}
	}
	if _, ok := rr("100m", "").Requests[corev1.ResourceMemory]; ok {
		t.Fatal("test setup")
	}
}

func pod(res corev1.ResourceRequirements) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "side"}, {Name: "app", Resources: res}}}}
}

func TestPatch(t *testing.T) {
	from, to := rr("100m", ""), rr("500m", "")
	b, ok, err := Patch(pod(from), "u1", "app", from, to)
	if err != nil || !ok {
		t.Fatalf("Patch = %v, %v", ok, err)
	}
	var ops []op
	if err := json.Unmarshal(b, &ops); err != nil {
		t.Fatal(err)
	}
	want := []string{"test /metadata/uid", "test /spec/containers/1/name", "test /spec/containers/1/resources", "replace /spec/containers/1/resources"}
	if len(ops) != len(want) {
		t.Fatalf("ops = %s", b)
	}
	for i, o := range ops {
		if o.Op+" "+o.Path != want[i] {
			t.Errorf("op %d = %s %s, want %s", i, o.Op, o.Path, want[i])
		}
	}
	if !strings.Contains(string(b), `"replace","path":"/spec/containers/1/resources","value":{"requests":{"cpu":"500m"}}`) {
		t.Errorf("patch does not set 500m: %s", b)
	}
	if _, ok, err := Patch(pod(to), "u1", "app", from, to); ok || err != nil {
		t.Errorf("already resized: ok %v, err %v", ok, err)
	}
	for name, p := range map[string]*corev1.Pod{"replaced": pod(from), "changed by others": pod(rr("300m", ""))} {
		uid := "u1"
		if name == "replaced" {
			uid = "u2"
		}
		if _, _, err := Patch(p, uid, "app", from, to); err == nil {
			t.Errorf("%s: patched", name)
		}
	}
	if _, _, err := Patch(pod(from), "u1", "gone", from, to); err == nil {
		t.Error("a container that is gone: patched")
	}
}
