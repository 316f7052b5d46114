package pulls

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReported(t *testing.T) {
	const img0, img1 = "r.example/shop/web:1.3.0@sha256:2222", "r.example/shop/side:2"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "pulls", Name: "pp-0", UID: "uid-pp"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "pull-0", Image: img0}, {Name: "pull-1", Image: img1}}}}
	pulled := func(container, image string) corev1.Event {
		return corev1.Event{Reason: "Pulled", Type: corev1.EventTypeNormal,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "pulls", Name: "pp-0", UID: "uid-pp",
				FieldPath: "spec.containers{" + container + "}"},
			Source:  corev1.EventSource{Component: "kubelet", Host: "node-1"},
			Message: fmt.Sprintf("Successfully pulled image %q in 4.8s (4.8s including waiting). Image size: 104857600 bytes.", image)}
	}
	both := func(edit func(*corev1.Event)) []corev1.Event {
		e := pulled("pull-1", img1)
		edit(&e)
		return []corev1.Event{pulled("pull-0", img0), e}
	}
	tests := []struct {
		name string
		evs  []corev1.Event
		want bool
	}{
		{"every container pulled", both(func(*corev1.Event) {}), true},
		{"present already", both(func(e *corev1.Event) {
			e.Message = fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", img1)
		}), true},
		{"untagged image named with :latest", []corev1.Event{pulled("pull-0", img0), pulled("pull-1", "r.example/shop/side:latest")}, false},
		{"one container not yet", []corev1.Event{pulled("pull-0", img0)}, false},
		{"none", nil, false},
		{"another pod of the same name", both(func(e *corev1.Event) { e.InvolvedObject.UID = "uid-old" }), false},
		{"another container", both(func(e *corev1.Event) { e.InvolvedObject.FieldPath = "spec.containers{pull-0}" }), false},
		{"another node's kubelet", both(func(e *corev1.Event) { e.Source.Host = "node-2" }), false},
		{"not the kubelet", both(func(e *corev1.Event) { e.Source.Component = "someone" }), false},
		{"another image", both(func(e *corev1.Event) { e.Message = fmt.Sprintf("Successfully pulled image %q", img0) }), false},
		{"a failed pull", both(func(e *corev1.Event) { e.Reason, e.Type = "Failed", corev1.EventTypeWarning }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Reported(pod, tt.evs); got != tt.want {
				t.Errorf("Reported = %v, want %v", got, tt.want)
			}
		})
	}
	untagged := pod.DeepCopy()
	untagged.Spec.Containers = []corev1.Container{{Name: "pull-0", Image: "r.example/shop/side"}}
	if !Reported(untagged, []corev1.Event{pulled("pull-0", "r.example/shop/side:latest")}) {
		t.Error("an untagged image the kubelet names with :latest: not reported pulled")
	}
}
