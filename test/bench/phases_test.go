package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestBreakdown(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Budget 2, three pods: a and b together, c only once a is verified;
	// b's slot is idle from 4s to 6s although c waits.
	pods := map[string]podStamps{
		"ns/a": {Planned: at(1), Prepulled: at(2), Patched: at(2.5), Verified: at(6)},
		"ns/b": {Planned: at(1), Prepulled: at(2), Patched: at(2.5), Verified: at(4)},
		"ns/c": {Planned: at(6), Prepulled: at(7), Patched: at(7.5), Verified: at(10)},
	}
	got := breakdown(at(0.5), at(16), pods, 2)
	want := []phase{
		{Name: "webhook → first pod planned", Seconds: 0.5},
		{Name: "planned → image pre-pulled on its node, median per pod", Seconds: 1, Note: "slowest 1.00s"},
		{Name: "pre-pulled → patched (gate False, grace, patch), median per pod", Seconds: 0.5, Note: "slowest 0.50s"},
		{Name: "patched → verified (kubelet restart, gate True, Ready), median per pod", Seconds: 2.5, Note: "slowest 3.50s"},
		{Name: "pods in flight: first planned → last verified", Seconds: 9, Note: "11% of the max-unavailable budget (2) idle while pods waited"},
		{Name: "last verified → rollout.completed (template sync)", Seconds: 6},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("breakdown (-want +got):\n%s", diff)
	}
}

// With every pod's Ready seen, the step from patched to verified is told
// apart into the kubelet's side and the project's.
func TestBreakdownSplitsAtReady(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	pods := map[string]podStamps{
		"ns/a": {Planned: at(1), Patched: at(2), Ready: at(5), Verified: at(6)},
		"ns/b": {Planned: at(1), Patched: at(2), Ready: at(3), Verified: at(7)},
		"ns/c": {Planned: at(1), Patched: at(2), Ready: at(4), Verified: at(4.5)},
	}
	got := breakdown(at(0.5), at(8), pods, 3)
	want := []phase{
		{Name: "webhook → first pod planned", Seconds: 0.5},
		{Name: "pre-pulled → patched (gate False, grace, patch), median per pod", Seconds: 1, Note: "slowest 1.00s"},
		{Name: "patched → verified (kubelet restart, gate True, Ready), median per pod", Seconds: 4, Note: "slowest 5.00s"},
		{Name: "of which patched → Ready on the new image (kubelet restart, gate True; the benchmark's watch), median per pod", Seconds: 2, Note: "slowest 3.00s"},
		{Name: "of which Ready → verified (pod.updated, verify's decision, upgrade.succeeded stored), median per pod", Seconds: 1, Note: "slowest 4.00s"},
		{Name: "pods in flight: first planned → last verified", Seconds: 6, Note: "0% of the max-unavailable budget (3) idle while pods waited"},
		{Name: "last verified → rollout.completed (template sync)", Seconds: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("breakdown (-want +got):\n%s", diff)
	}
	// One pod's Ready not seen: no split, rather than one over some pods.
	b := pods["ns/b"]
	b.Ready = time.Time{}
	pods["ns/b"] = b
	if got := breakdown(at(0.5), at(8), pods, 3); len(got) != len(want)-2 {
		t.Errorf("breakdown with a Ready missing: %d phases, want %d", len(got), len(want)-2)
	}
}

// readyOn needs the pod Ready and a running container on the digest.
func TestReadyOn(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	pod := func(ready bool, imageID string, running bool) *corev1.Pod {
		p := &corev1.Pod{}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
		cs := corev1.ContainerStatus{Name: "app", ImageID: imageID}
		if running {
			cs.State.Running = &corev1.ContainerStateRunning{}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		return p
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"ready on the digest", pod(true, "reg/app@"+digest, true), true},
		{"not ready", pod(false, "reg/app@"+digest, true), false},
		{"ready on another digest", pod(true, "reg/app@sha256:"+strings.Repeat("cd", 32), true), false},
		{"not running", pod(true, "reg/app@"+digest, false), false},
	} {
		if got := readyOn(c.pod, digest); got != c.want {
			t.Errorf("%s: readyOn = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIdleShare(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// Budget 2, two pods back to back: one slot idle while b waits (0-5s),
	// none after (only b is left).
	pods := map[string]podStamps{"a": {Planned: at(0), Verified: at(5)}, "b": {Planned: at(5), Verified: at(10)}}
	if got := idleShare(pods, 2, at(0), at(10)); got != 0.25 {
		t.Errorf("idleShare = %v, want 0.25", got)
	}
	// Budget 2, both at once: nothing idle.
	pods = map[string]podStamps{"a": {Planned: at(0), Verified: at(10)}, "b": {Planned: at(0), Verified: at(10)}}
	if got := idleShare(pods, 2, at(0), at(10)); got != 0 {
		t.Errorf("idleShare = %v, want 0", got)
	}
}
