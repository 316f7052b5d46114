package inplace

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

// fullState sets every field a State can carry, down to a resize's
// resource maps, so that a copy sharing any of them shows.
func fullState() State {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	res := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}, Claims: []corev1.ResourceClaim{{Name: "gpu"}}}
	}
	return State{UpgradeID: "up-1", Target: "reg/web:2", Phase: PhasePatched, Reason: "r", Message: "m",
		PatchedAt: at, RollbackAt: at, FinishedAt: at,
		Containers: []ContainerState{{Name: "app", PreviousImage: "reg/web:1", TargetImage: "reg/web:2",
			Resources: &events.ResizeResources{From: res("1"), To: res("2")}}},
		Owner:   events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Restart: &events.RestartPlan{RequestID: "rq", Reason: "r"}, Resize: &events.ResizePlan{RequestID: "rz"},
		Replaced: &Replaced{UpgradeID: "up-0", Phase: PhaseSucceeded, PatchedAt: at}}
}

func podWithState(raw string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1",
		Annotations: map[string]string{StateAnnotation: raw}}}
}

// TestParseStateHandsOutCopies: a caller that changes every part of the
// State it got does not change what the next caller of the same
// annotation gets.
func TestParseStateHandsOutCopies(t *testing.T) {
	pod := podWithState(fullState().Encode())
	first, err := ParseState(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := fullState()
	if diff := cmp.Diff(&want, first); diff != "" {
		t.Fatalf("ParseState (-want +got):\n%s", diff)
	}
	first.Phase, first.UpgradeID = PhaseFailed, "other"
	first.Containers[0].Name = "changed"
	first.Containers[0].Resources.From.Limits[corev1.ResourceCPU] = resource.MustParse("9")
	first.Containers[0].Resources.To.Claims[0].Name = "changed"
	first.Containers = append(first.Containers, ContainerState{Name: "extra"})
	first.Restart.Reason, first.Resize.Reason, first.Replaced.Phase = "changed", "changed", PhaseFailed

	second, err := ParseState(pod)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&want, second); diff != "" {
		t.Errorf("ParseState after a caller changed its copy (-want +got):\n%s", diff)
	}
}

// TestCloneSharesNothing: every slice, map and pointer reachable from a
// clone is its own, whatever fields State gains (they are found by
// reflection and filled).
func TestCloneSharesNothing(t *testing.T) {
	var s State
	fill(reflect.ValueOf(&s).Elem())
	c := s.clone()
	if diff := cmp.Diff(&s, c); diff != "" {
		t.Fatalf("clone differs (-orig +clone):\n%s", diff)
	}
	for _, path := range shared(reflect.ValueOf(s), reflect.ValueOf(*c), "State") {
		t.Errorf("clone shares %s with the original", path)
	}
}

// fill sets v's exported fields to non-zero values: one element in each
// slice and map, every pointer allocated.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.Set(reflect.MakeMapWithSize(v.Type(), 1))
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// shared lists the paths where a and b hold the same slice, map or
// pointer.
func shared(a, b reflect.Value, path string) []string {
	var out []string
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			out = append(out, path)
		}
		out = append(out, shared(a.Elem(), b.Elem(), path)...)
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Pointer() == b.Pointer() {
			out = append(out, path)
		}
		for i := range min(a.Len(), b.Len()) {
			out = append(out, shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			out = append(out, path)
		}
		for _, k := range a.MapKeys() {
			if e := b.MapIndex(k); e.IsValid() {
				out = append(out, shared(a.MapIndex(k), e, fmt.Sprintf("%s[%v]", path, k))...)
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				out = append(out, shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
			}
		}
	}
	return out
}

// TestParseStateReadsEachValue: a pod whose annotation changed gets the
// new value's state, and a value that is not a State is refused naming
// the pod, also after the same value was read before.
func TestParseStateReadsEachValue(t *testing.T) {
	st := fullState()
	for _, phase := range []Phase{PhasePatched, PhaseSucceeded, PhasePatched} {
		st.Phase = phase
		got, err := ParseState(podWithState(st.Encode()))
		if err != nil || got.Phase != phase {
			t.Errorf("ParseState of a %s state: %v, %v", phase, got, err)
		}
	}
	for _, raw := range []string{`{"phase":"Patched"}`, `{"phase":"Patched"}`, `{`, `{`} {
		if got, err := ParseState(podWithState(raw)); err == nil || !strings.Contains(err.Error(), "shop/web-1") {
			t.Errorf("ParseState(%s) = %v, %v; want an error naming the pod", raw, got, err)
		}
	}
}

// TestStateMemoIsBounded: however many values are read, the memo keeps at
// most two generations, and the value read last is still there.
func TestStateMemoIsBounded(t *testing.T) {
	var m stateMemo
	st := fullState()
	for i := range 3*memoSize + 7 {
		st.UpgradeID = fmt.Sprint("up-", i)
		if _, ok, err := m.parse(st.Encode()); !ok || err != nil {
			t.Fatalf("parse %d: %v, %v", i, ok, err)
		}
	}
	if n := len(m.cur) + len(m.prev); n > 2*memoSize {
		t.Errorf("memo holds %d states, want at most %d", n, 2*memoSize)
	}
	if _, hit := m.cur[st.Encode()]; !hit {
		t.Errorf("the state read last is not in the memo")
	}
}

// BenchmarkParseState is a read of a patched pod's state, as the watcher,
// verify and patch-pod each make for one pod, again and again.
func BenchmarkParseState(b *testing.B) {
	st := fullState()
	st.Containers[0].Resources, st.Restart, st.Resize = nil, nil, nil
	pod := podWithState(st.Encode())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseState(pod); err != nil {
			b.Fatal(err)
		}
	}
}
