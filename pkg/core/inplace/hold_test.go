package inplace

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// held is sts after its hold for upgradeID, as the controller sees it once
// it observed the hold's generation.
func held(t *testing.T, sts *appsv1.StatefulSet, upgradeID, revision string) *appsv1.StatefulSet {
	t.Helper()
	patch, err := StatefulSetHoldPatch(sts, upgradeID, revision)
	if err != nil {
		t.Fatal(err)
	}
	var out appsv1.StatefulSet
	mustApply(t, sts, patch, &out)
	out.Generation++
	out.Status.ObservedGeneration = out.Generation
	return &out
}

// A hold sets partition = replicas and records the strategy before it;
// a second hold for the same rollout writes nothing; a newer rollout's hold
// keeps the first strategy recorded; the template sync takes the hold over
// (the partitioned strategy is never what gets restored), and the restore
// puts back the strategy from before the first hold.
func TestStatefulSetHoldIsTakenOverAndRestored(t *testing.T) {
	two := intstr.FromInt32(2)
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(int32(0)), MaxUnavailable: &two}}
	sts := statefulSet(rolling)
	sts.Generation, sts.Status.ObservedGeneration = 4, 4
	first := held(t, sts, "up-1", "db-1")
	want := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(int32(3)), MaxUnavailable: &two}}
	if diff := cmp.Diff(want, first.Spec.UpdateStrategy); diff != "" {
		t.Errorf("held strategy (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(TemplateImages(sts.Spec.Template.Spec), TemplateImages(first.Spec.Template.Spec)); diff != "" {
		t.Errorf("the hold changed the template (-before +after):\n%s", diff)
	}
	if _, err := StatefulSetHoldPatch(first, "up-1", "db-1"); !errors.Is(err, ErrAlreadyApplied) {
		t.Errorf("holding again: %v; want ErrAlreadyApplied", err)
	}
	second := held(t, first, "up-2", "db-2")
	rec, err := ParseSyncRecord(second.ObjectMeta)
	if err != nil || !rec.Hold || rec.UpgradeID != "up-2" || rec.Revision != "db-2" {
		t.Fatalf("record after a newer rollout's hold: %+v (%v)", rec, err)
	}
	if diff := cmp.Diff(&rolling, rec.StatefulSetStrategy); diff != "" {
		t.Errorf("recorded strategy (-want +got):\n%s", diff)
	}

	patch, err := StatefulSetSyncPatch(second, "up-2", newImages(), "")
	if err != nil {
		t.Fatal(err)
	}
	var synced appsv1.StatefulSet
	mustApply(t, second, patch, &synced)
	rec, err = ParseSyncRecord(synced.ObjectMeta)
	if err != nil || rec.Hold || rec.UpgradeID != "up-2" {
		t.Fatalf("record after the sync: %+v (%v); want the sync's own", rec, err)
	}
	if diff := cmp.Diff(syncedImages(), TemplateImages(synced.Spec.Template.Spec)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	if _, err := StatefulSetHoldPatch(&synced, "up-3", "db-3"); !errors.Is(err, ErrBusy) {
		t.Errorf("a hold over a sync under way: %v; want ErrBusy", err)
	}
	restored := repeatThenRestore(t, &synced, func(sts *appsv1.StatefulSet) ([]byte, error) {
		return StatefulSetSyncPatch(sts, "up-2", newImages(), "")
	}, StatefulSetRestorePatch)
	if diff := cmp.Diff(rolling, restored.Spec.UpdateStrategy); diff != "" {
		t.Errorf("strategy after restore (-want +got):\n%s", diff)
	}

	// A hold released without a sync restores the same.
	var released appsv1.StatefulSet
	body, err := StatefulSetRestorePatch(first)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, first, body, &released)
	if diff := cmp.Diff(rolling, released.Spec.UpdateStrategy); diff != "" || released.Annotations[SyncAnnotation] != "" {
		t.Errorf("released: strategy (-want +got):\n%s record %q", diff, released.Annotations[SyncAnnotation])
	}
}

// patch-pod labels a pod ahead only while the hold stands for its upgrade,
// the controller has observed it, and the pod is below the partition.
func TestHeldRevision(t *testing.T) {
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
	base := held(t, statefulSet(rolling), "up-1", "db-5c9f")
	pod := func(name string, index string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if index != "" {
			p.Labels[PodIndexLabel] = index
		}
		return p
	}
	tests := []struct {
		name    string
		change  func(*appsv1.StatefulSet)
		pod     *corev1.Pod
		upgrade string
		want    bool
	}{
		{"held", func(*appsv1.StatefulSet) {}, pod("db-2", "2"), "up-1", true},
		{"held, ordinal from the name", func(*appsv1.StatefulSet) {}, pod("db-1", ""), "up-1", true},
		{"another upgrade's plan", func(*appsv1.StatefulSet) {}, pod("db-0", "0"), "up-0", false},
		{"not observed yet", func(s *appsv1.StatefulSet) { s.Status.ObservedGeneration-- }, pod("db-0", "0"), "up-1", false},
		{"scaled up past the partition", func(s *appsv1.StatefulSet) { s.Spec.Replicas = new(int32(4)) }, pod("db-0", "0"), "up-1", false},
		{"at or past the partition", func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = new(int32(3))
			s.Spec.Replicas = new(int32(3))
		}, pod("db-3", "3"), "up-1", false},
		{"partition removed", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate = nil }, pod("db-0", "0"), "up-1", false},
		{"no hold", func(s *appsv1.StatefulSet) { delete(s.Annotations, SyncAnnotation) }, pod("db-0", "0"), "up-1", false},
		{"OnDelete", func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}, pod("db-7", "7"), "up-1", true},
		{"not the StatefulSet's pod", func(*appsv1.StatefulSet) {}, pod("web-0", ""), "up-1", false},
		{"a recorded revision of another StatefulSet", recorded("web-5c9f"), pod("db-0", "0"), "up-1", false},
		{"a recorded revision no label can carry", recorded("db-" + strings.Repeat("x", 70)), pod("db-0", "0"), "up-1", false},
		{"a recorded revision without a hash", recorded("db-"), pod("db-0", "0"), "up-1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := base.DeepCopy()
			tt.change(sts)
			rev, ok := HeldRevision(sts, tt.pod, tt.upgrade)
			if ok != tt.want || (ok && rev != "db-5c9f") {
				t.Errorf("HeldRevision = %q, %v; want %v", rev, ok, tt.want)
			}
		})
	}
}

// recorded rewrites the hold record's revision, as anyone who may edit
// the StatefulSet could.
func recorded(revision string) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) {
		rec, _ := ParseSyncRecord(s.ObjectMeta)
		rec.Revision = revision
		b, _ := json.Marshal(rec)
		s.Annotations[SyncAnnotation] = string(b)
	}
}

// The label goes into the image write, whose resourceVersion test guards it.
func TestRevisionOpsJoinTheImageWrite(t *testing.T) {
	pod, plan := webPod(), webPlan()
	pod.Labels = map[string]string{"app": "web", RevisionLabel: "web-old"}
	body, err := Patch(pod, plan, t0)
	if err != nil {
		t.Fatal(err)
	}
	body, err = RevisionOps(body, pod, "web-new")
	if err != nil {
		t.Fatal(err)
	}
	var out corev1.Pod
	mustApply(t, pod, body, &out)
	if out.Labels[RevisionLabel] != "web-new" || out.Labels["app"] != "web" {
		t.Errorf("labels %v", out.Labels)
	}
	if out.Spec.Containers[0].Image == pod.Spec.Containers[0].Image {
		t.Error("the image was not patched with the label")
	}
	moved := pod.DeepCopy()
	moved.ResourceVersion = "changed"
	if err := apply(t, moved, body, &corev1.Pod{}); err == nil {
		t.Error("the labelled patch applied over a pod that changed since it was read")
	}
}
