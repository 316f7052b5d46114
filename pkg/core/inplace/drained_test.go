package inplace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestDrained(t *testing.T) {
	const uid = types.UID("u-1")
	pod := func(ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: ReadinessGate, Status: corev1.ConditionFalse}, {Type: corev1.PodReady, Status: ready}}}}
	}
	slice := func(target types.UID, ready *bool) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ready},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", UID: target}}},
		}
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		slices []discoveryv1.EndpointSlice
		want   bool
		msg    string
	}{
		{name: "ready while the gate is False", pod: pod(corev1.ConditionTrue), want: false, msg: "the pod is still Ready"},
		{name: "not ready, no service", pod: pod(corev1.ConditionFalse), want: true},
		{name: "not ready, endpoint still ready", pod: pod(corev1.ConditionFalse), slices: []discoveryv1.EndpointSlice{slice(uid, ptr.To(true))},
			want: false, msg: "still a ready endpoint of Service web (EndpointSlice web-abcde)"},
		{name: "endpoint readiness unknown counts as ready", pod: pod(corev1.ConditionFalse), slices: []discoveryv1.EndpointSlice{slice(uid, nil)}, want: false,
			msg: "still a ready endpoint of Service web (EndpointSlice web-abcde)"},
		{name: "endpoint not ready", pod: pod(corev1.ConditionFalse), slices: []discoveryv1.EndpointSlice{slice(uid, ptr.To(false))}, want: true},
		{name: "another pod's ready endpoint", pod: pod(corev1.ConditionFalse), slices: []discoveryv1.EndpointSlice{slice("other", ptr.To(true))}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := Drained(tt.pod, tt.slices)
			if got != tt.want || msg != tt.msg {
				t.Errorf("Drained = %v, %q; want %v, %q", got, msg, tt.want, tt.msg)
			}
		})
	}
}
