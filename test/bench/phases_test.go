package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
