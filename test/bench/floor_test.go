package main

import (
	"testing"

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
