package inplace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// drainedPod is webPod as patch-pod patches it: owned by its ReplicaSet,
// its gate set False and the kubelet's Ready False after it.
func drainedPod() *corev1.Pod {
	p := webPod()
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9", UID: "rs-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	p.Annotations = map[string]string{"team": "shop"}
	p.Status.Conditions = []corev1.PodCondition{
		{Type: ReadinessGate, Status: corev1.ConditionFalse, Reason: GateReasonStart,
			Message: GateStartMessage("up-1", "nginx:1.25.1") + "; False since 2026-07-01T11:59:59.5Z", LastTransitionTime: metav1.NewTime(t0)},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
	}
	return p
}

func TestPatchGuardGolden(t *testing.T) {
	got, err := Patch(drainedPod(), webPlan(), t0)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "patch_drained", got)
}

// TestPatchGuard: the image patch, built on the pod as read, is applied to
// the pod as a concurrent write left it. A write of nothing the decision
// read goes through, and the result is that pod with the planned images
// and the state and nothing else changed; a write of anything it read is
// refused.
func TestPatchGuard(t *testing.T) {
	deleting := metav1.NewTime(t0)
	tests := []struct {
		name    string
		change  func(*corev1.Pod)
		refused bool
	}{
		{"the kubelet's Ready False", func(p *corev1.Pod) {
			p.Status.Conditions[1].Status = corev1.ConditionFalse
			p.Status.ContainerStatuses[0].Ready = false
		}, false},
		{"conditions rewritten by the kubelet, in place", func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse})
		}, false},
		{"a label, an annotation, a toleration, a deadline", func(p *corev1.Pod) {
			p.Labels["tier"] = "front"
			p.Annotations["note"] = "hi"
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
			p.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
		}, false},
		{"a container not planned restarted", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[1].ContainerID, p.Status.ContainerStatuses[1].RestartCount = "containerd://metrics-2", 1
		}, false},

		{"recreated: another uid", func(p *corev1.Pod) { p.UID = "uid-2" }, true},
		{"being deleted", func(p *corev1.Pod) { p.DeletionTimestamp = &deleting }, true},
		{"image changed", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.24.9" }, true},
		{"sidecar image changed", func(p *corev1.Pod) { p.Spec.InitContainers[1].Image = "nginx:1.24.9" }, true},
		{"planned container crashed and restarted", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].ContainerID, p.Status.ContainerStatuses[0].RestartCount = "containerd://app-2", 1
		}, true},
		{"planned container's image pulled again", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].ImageID = "docker.io/library/nginx@" + dgOdd
		}, true},
		{"another upgrade's state", func(p *corev1.Pod) {
			p.Annotations[StateAnnotation] = State{UpgradeID: "up-0", Phase: PhasePatched}.Encode()
		}, true},
		{"gate opened", func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionTrue }, true},
		{"gate set False by another upgrade", func(p *corev1.Pod) { p.Status.Conditions[0].Message = "in-place upgrade up-9 to x" }, true},
		{"gate moved in the conditions", func(p *corev1.Pod) {
			c := p.Status.Conditions
			p.Status.Conditions = []corev1.PodCondition{c[1], c[0]}
		}, true},
		{"orphaned", func(p *corev1.Pod) { p.OwnerReferences = nil }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, err := Patch(drainedPod(), webPlan(), t0)
			if err != nil {
				t.Fatal(err)
			}
			now := drainedPod()
			tt.change(now)
			now.ResourceVersion = "101" // every write moves it
			var got corev1.Pod
			err = apply(t, now, patch, &got)
			if tt.refused {
				if err == nil || !strings.Contains(err.Error(), "test") {
					t.Errorf("apply error = %v; want a failed test operation", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			want := now.DeepCopy()
			want.Spec.InitContainers[1].Image = "docker.io/library/nginx:1.25.1@" + dgNew
			want.Spec.Containers[0].Image = "nginx:1.25.1@" + dgNew
			want.Annotations[StateAnnotation] = got.Annotations[StateAnnotation]
			if diff := cmp.Diff(want, &got); diff != "" {
				t.Errorf("pod after the patch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPatchGuardAbsences: what the pod did not have when read must still
// be absent: a state, or any annotation at all (the patch then adds the
// whole map), written meanwhile refuses the patch.
func TestPatchGuardAbsences(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
	}{
		{"no state", map[string]string{"team": "shop"}},
		{"no annotations", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := drainedPod()
			read.Annotations = tt.annotations
			patch, err := Patch(read, webPlan(), t0)
			if err != nil {
				t.Fatal(err)
			}
			now := read.DeepCopy()
			now.ResourceVersion = "101"
			now.Annotations = map[string]string{"team": "shop", StateAnnotation: State{UpgradeID: "up-0", Phase: PhaseRollingBack}.Encode()}
			var got corev1.Pod
			if err := apply(t, now, patch, &got); err == nil || !strings.Contains(err.Error(), "test") {
				t.Errorf("apply error = %v; want a failed test operation", err)
			}
		})
	}
}

// TestPatchGuardFallsBackToResourceVersion: a restarted container the
// kubelet has not started yet (no containerID to record) or a declared gate
// without its condition cannot be pinned field by field: the patch then
// tests the resourceVersion as well.
func TestPatchGuardFallsBackToResourceVersion(t *testing.T) {
	tests := []struct {
		name   string
		change func(*corev1.Pod)
	}{
		{"no containerID", func(p *corev1.Pod) { p.Status.ContainerStatuses[0].ContainerID = "" }},
		{"no container status", func(p *corev1.Pod) { p.Status.ContainerStatuses = p.Status.ContainerStatuses[1:] }},
		{"no gate condition", func(p *corev1.Pod) { p.Status.Conditions = p.Status.Conditions[1:] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := drainedPod()
			tt.change(read)
			patch, err := Patch(read, webPlan(), t0)
			if err != nil {
				t.Fatal(err)
			}
			now := read.DeepCopy()
			now.ResourceVersion = "101"
			var got corev1.Pod
			if err := apply(t, now, patch, &got); err == nil || !strings.Contains(err.Error(), "resourceVersion") {
				t.Errorf("apply error = %v; want the resourceVersion's test failed", err)
			}
		})
	}
}

// TestRevisionOpsGuardTheLabel: the revision label added to an image patch
// is tested as read, so a label set meanwhile refuses the patch.
func TestRevisionOpsGuardTheLabel(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
	}{
		{"label absent", map[string]string{"app": "web"}},
		{"label set", map[string]string{"app": "web", RevisionLabel: "web-1"}},
		{"no labels", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := drainedPod()
			read.Labels = tt.labels
			body, err := Patch(read, webPlan(), t0)
			if err != nil {
				t.Fatal(err)
			}
			if body, err = RevisionOps(body, read, "web-2"); err != nil {
				t.Fatal(err)
			}
			var got corev1.Pod
			if err := apply(t, read, body, &got); err != nil || got.Labels[RevisionLabel] != "web-2" {
				t.Fatalf("on the pod as read: %v, label %q; want web-2", err, got.Labels[RevisionLabel])
			}
			now := read.DeepCopy()
			now.ResourceVersion = "101"
			now.Labels = map[string]string{"app": "web", RevisionLabel: "web-3"}
			if err := apply(t, now, body, &got); err == nil || !strings.Contains(err.Error(), "test") {
				t.Errorf("label set meanwhile: apply error = %v; want a failed test operation", err)
			}
		})
	}
}
