package patchpod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// TestGateFalseSince: the moment the gate went False is the one its
// message names, to the nanosecond, only when it lies within the second
// of its lastTransitionTime (second precision, truncated); any other
// message (none, garbled, forged earlier or later) counts from the end of
// that second, so a grace is never cut short.
func TestGateFalseSince(t *testing.T) {
	set := time.Date(2026, 11, 23, 10, 0, 5, 700_000_000, time.UTC)
	ltt := metav1.NewTime(set.Truncate(time.Second))
	end := ltt.Add(time.Second)
	tests := []struct {
		name string
		msg  string
		want time.Time
	}{
		{"as written", gateMessage("in-place upgrade up-1 to x", set), set},
		{"no moment", "in-place upgrade up-1 to x", end},
		{"garbled", "in-place upgrade; False since yesterday", end},
		{"forged earlier", gateMessage("x", set.Add(-time.Minute)), end},
		{"forged later", gateMessage("x", end), end},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: inplace.ReadinessGate,
				Status: corev1.ConditionFalse, Message: tt.msg, LastTransitionTime: ltt}}}}
			got, ok := gateFalseSince(pod)
			if !ok || !got.Equal(tt.want) {
				t.Errorf("gateFalseSince = %s, %v; want %s", got, ok, tt.want)
			}
		})
	}
}
