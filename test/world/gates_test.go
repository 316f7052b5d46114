package world_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/test/world"
)

const gate = "inplace.dev/ready"

// TestReadinessGate: a pod whose template declares the inplace.dev/ready
// gate is not Ready (ReadinessGatesNotReady) until its condition is set
// True through the status subresource, goes NotReady when it is set False,
// and the kubelet never drops the condition (even across an in-place
// restart).
func TestReadinessGate(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	v1, _ := push(t, w, "inplace/gated", "v1")
	v2, id2 := push(t, w, "inplace/gated", "v2")
	dep := deployment("gated", ns, v1, 1)
	dep.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	if _, err := w.Client().AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	pods, err := world.WaitPods(ctx, w.Client(), ns, "app=gated", podTimeout, "containers ready, gate missing", func(ps []corev1.Pod) bool {
		return len(ps) == 1 && conditionOf(&ps[0], corev1.ContainersReady) == corev1.ConditionTrue
	})
	if err != nil {
		t.Fatal(err)
	}
	name := pods[0].Name
	p := waitReady(t, w, ns, name, false)
	if c := findCond(p, corev1.PodReady); c.Reason != "ReadinessGatesNotReady" || !strings.Contains(c.Message, "does not exist") {
		t.Errorf("Ready condition = %+v, want ReadinessGatesNotReady, gate does not exist", c)
	}

	setGate(t, w, ns, name, corev1.ConditionTrue)
	waitReady(t, w, ns, name, true)

	setGate(t, w, ns, name, corev1.ConditionFalse)
	p = waitReady(t, w, ns, name, false)
	if c := findCond(p, corev1.PodReady); c.Reason != "ReadinessGatesNotReady" || !strings.Contains(c.Message, `but False`) {
		t.Errorf("Ready condition = %+v, want ReadinessGatesNotReady ... but False", c)
	}

	patchImage(t, w, ns, name, "app", v2)
	p, err = world.WaitPod(ctx, w.Client(), ns, name, podTimeout, "restarted on v2", func(p *corev1.Pod) bool {
		s := world.ContainerStatus(p, "app")
		return s.ImageID == id2 && s.Ready
	})
	if err != nil {
		t.Fatal(err)
	}
	if conditionOf(p, gate) != corev1.ConditionFalse || world.PodReady(p) {
		t.Errorf("after restart: gate %q ready %v, want the gate kept False and the pod not Ready", conditionOf(p, gate), world.PodReady(p))
	}
	setGate(t, w, ns, name, corev1.ConditionTrue)
	waitReady(t, w, ns, name, true)
}

func setGate(t *testing.T, w *world.World, ns, pod string, status corev1.ConditionStatus) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"lastTransitionTime":%q}]}}`,
		gate, status, time.Now().UTC().Format(time.RFC3339))
	_, err := w.Client().CoreV1().Pods(ns).Patch(t.Context(), pod, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("set gate %s: %v", status, err)
	}
}

func waitReady(t *testing.T, w *world.World, ns, pod string, ready bool) *corev1.Pod {
	t.Helper()
	p, err := world.WaitPod(t.Context(), w.Client(), ns, pod, podTimeout, fmt.Sprintf("Ready=%v", ready), func(p *corev1.Pod) bool {
		return world.PodReady(p) == ready && conditionOf(p, corev1.ContainersReady) == corev1.ConditionTrue
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func conditionOf(p *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	return findCond(p, typ).Status
}

func findCond(p *corev1.Pod, typ corev1.PodConditionType) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.PodCondition{}
}
