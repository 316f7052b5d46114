package fntest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/test/world"
)

// Recorder records Kubernetes Events through client (so through its RBAC)
// until the test ends.
func Recorder(t testing.TB, client kubernetes.Interface, component string) record.EventRecorder {
	t.Helper()
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	t.Cleanup(b.Shutdown)
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
}

// WaitEvent waits for an Event about pod with reason whose message
// contains substr.
func WaitEvent(t testing.TB, w *world.World, pod *corev1.Pod, reason, substr string) corev1.Event {
	t.Helper()
	var found corev1.Event
	sel := fields.Set{"involvedObject.uid": string(pod.UID), "reason": reason}.String()
	err := world.Eventually(t.Context(), Timeout, fmt.Sprintf("event %s %q on %s", reason, substr, pod.Name),
		func(ctx context.Context) (bool, error) {
			l, err := w.Client().CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
			if err != nil {
				return false, err
			}
			for _, e := range l.Items {
				if strings.Contains(e.Message, substr) {
					found = e
					return true, nil
				}
			}
			return false, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// NoEvents fails the test for each Event about pod with reason there is
// now. An Event is recorded asynchronously: call it once a later Event of
// the same recorder has been seen (WaitEvent), as it writes in order.
func NoEvents(t testing.TB, w *world.World, pod *corev1.Pod, reason string) {
	t.Helper()
	sel := fields.Set{"involvedObject.uid": string(pod.UID), "reason": reason}.String()
	l, err := w.Client().CoreV1().Events(pod.Namespace).List(t.Context(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Items {
		t.Errorf("an Event about %s: %s %q", pod.Name, e.Reason, e.Message)
	}
}
