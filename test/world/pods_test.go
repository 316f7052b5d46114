package world_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/test/world"
)

const podTimeout = time.Minute

// push pushes a fresh image to repo:tag and returns its reference and the
// imageID a node reports for it.
func push(t *testing.T, w *world.World, repo, tag string) (ref, imageID string) {
	t.Helper()
	skipOnReal(t, w)
	digest, err := w.Registry.Push(t.Context(), repo, tag)
	if err != nil {
		t.Fatalf("push %s:%s: %v", repo, tag, err)
	}
	return w.Registry.Host() + "/" + repo + ":" + tag, w.Registry.Host() + "/" + repo + "@" + digest
}

// skipOnReal skips a test that pushes images with registry.Push: their
// layers are random bytes, which a real node cannot run.
func skipOnReal(t *testing.T, w *world.World) {
	t.Helper()
	if w.IsReal() {
		t.Skip("pushes images of random layers (registry.Push), which real nodes cannot run: simulated and hollow nodes only")
	}
}

// runPod creates pod and waits for it to be Ready.
func runPod(t *testing.T, w *world.World, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	if _, err := w.Client().CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	p, err := world.WaitPod(ctx, w.Client(), pod.Namespace, pod.Name, podTimeout, "Ready", world.PodReady)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func simplePod(ns, name, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
}

// patchImage changes the image of container c with a strategic-merge patch.
func patchImage(t *testing.T, w *world.World, ns, pod, c, image string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":%q,"image":%q}]}}`, c, image)
	_, err := w.Client().CoreV1().Pods(ns).Patch(t.Context(), pod, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch %s image to %s: %v", pod, image, err)
	}
}

// waitingReason is the waiting reason of container c, or "".
func waitingReason(p *corev1.Pod, c string) string {
	if s := world.ContainerStatus(p, c); s != nil && s.State.Waiting != nil {
		return s.State.Waiting.Reason
	}
	return ""
}

// podEvents lists the events about pod (optionally one reason).
func podEvents(ctx context.Context, w *world.World, p *corev1.Pod, reason string) ([]corev1.Event, error) {
	sel := fields.Set{"involvedObject.uid": string(p.UID)}
	if reason != "" {
		sel["reason"] = reason
	}
	l, err := w.Client().CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// waitEvent waits for an event about p with reason whose message
// contains substr, and returns it.
func waitEvent(t *testing.T, w *world.World, p *corev1.Pod, reason, substr string) corev1.Event {
	t.Helper()
	var found corev1.Event
	err := world.Eventually(t.Context(), podTimeout, fmt.Sprintf("event %s %q on %s", reason, substr, p.Name), func(ctx context.Context) (bool, error) {
		evs, err := podEvents(ctx, w, p, reason)
		for _, e := range evs {
			if strings.Contains(e.Message, substr) {
				found = e
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func dump(p *corev1.Pod) string {
	b, _ := json.MarshalIndent(p.Status, "", "  ")
	return string(b)
}
