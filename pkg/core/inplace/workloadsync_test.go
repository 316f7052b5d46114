package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func statefulSet(strategy appsv1.StatefulSetUpdateStrategy) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", UID: "sts-uid", ResourceVersion: "7"},
		Spec: appsv1.StatefulSetSpec{Replicas: new(int32(3)), Template: podTemplate(), UpdateStrategy: strategy}}
}

func TestStatefulSetSync(t *testing.T) {
	two := intstr.FromInt32(2)
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(int32(0)), MaxUnavailable: &two}}
	tests := []struct {
		name       string
		strategy   appsv1.StatefulSetUpdateStrategy
		wantSynced appsv1.StatefulSetUpdateStrategy
	}{
		{"rolling update gets partition = replicas", rolling, appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(int32(3)), MaxUnavailable: &two}}},
		{"rolling update without rollingUpdate", appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(int32(3))}}},
		{"OnDelete is kept", appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := statefulSet(tt.strategy)
			patch, err := StatefulSetSyncPatch(sts, "up-1", newImages(), "")
			if err != nil {
				t.Fatal(err)
			}
			var synced appsv1.StatefulSet
			mustApply(t, sts, patch, &synced)
			if diff := cmp.Diff(syncedImages(), TemplateImages(synced.Spec.Template.Spec)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSynced, synced.Spec.UpdateStrategy); diff != "" {
				t.Errorf("strategy after sync (-want +got):\n%s", diff)
			}
			// A repeat after a crash must not record the partitioned strategy.
			restored := repeatThenRestore(t, &synced, func(sts *appsv1.StatefulSet) ([]byte, error) {
				return StatefulSetSyncPatch(sts, "up-1", newImages(), "")
			}, StatefulSetRestorePatch)
			if diff := cmp.Diff(tt.strategy, restored.Spec.UpdateStrategy); diff != "" {
				t.Errorf("strategy after restore (-want +got):\n%s", diff)
			}
		})
	}
}

// The DaemonSet keeps its RollingUpdate strategy (OnDelete made `kubectl
// rollout status` fail), the template change is tested against the
// template generation the pods were labelled for, and the change-cause is
// set with it.
func TestDaemonSetSync(t *testing.T) {
	ds := daemonSet()
	rolling := *ds.Spec.UpdateStrategy.DeepCopy()
	patch, err := DaemonSetSyncPatch(ds, "up-1", newImages(), "inplace upgrade up-1")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sync_daemonset", patch)
	var synced appsv1.DaemonSet
	mustApply(t, ds, patch, &synced)
	if diff := cmp.Diff(rolling, synced.Spec.UpdateStrategy); diff != "" {
		t.Errorf("strategy changed by the sync (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(syncedImages(), TemplateImages(synced.Spec.Template.Spec)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	if got := synced.Annotations[ChangeCauseAnnotation]; got != "inplace upgrade up-1" {
		t.Errorf("change-cause %q", got)
	}
	rec, err := ParseSyncRecord(synced.ObjectMeta)
	if err != nil || rec.TemplateGeneration == nil || *rec.TemplateGeneration != 4 {
		t.Errorf("record %+v (%v); want template generation 4", rec, err)
	}
	// Another writer changed the template meanwhile (generation 5): the
	// patch no longer applies.
	moved := ds.DeepCopy()
	moved.Annotations[appsv1.DeprecatedTemplateGeneration] = "5"
	if err := apply(t, moved, patch, &appsv1.DaemonSet{}); err == nil {
		t.Error("the template patch applied over a template generation the pods were not labelled for")
	}
	restored := repeatThenRestore(t, &synced, func(ds *appsv1.DaemonSet) ([]byte, error) {
		return DaemonSetSyncPatch(ds, "up-1", newImages(), "inplace upgrade up-1")
	}, DaemonSetRestorePatch)
	if diff := cmp.Diff(rolling, restored.Spec.UpdateStrategy); diff != "" {
		t.Errorf("strategy after restore (-want +got):\n%s", diff)
	}
}

// repeatThenRestore sends a sync patch again to synced (as a step repeated
// after a crash does), then the restore patch, and returns the object they
// leave; the restore must remove the record.
func repeatThenRestore[T any](t *testing.T, synced *T, again, restore func(*T) ([]byte, error)) *T {
	t.Helper()
	patch, err := again(synced)
	if err != nil {
		t.Fatal(err)
	}
	twice := new(T)
	mustApply(t, synced, patch, twice)
	if patch, err = restore(twice); err != nil {
		t.Fatal(err)
	}
	restored := new(T)
	mustApply(t, twice, patch, restored)
	if _, ok := any(restored).(metav1.Object).GetAnnotations()[SyncAnnotation]; ok {
		t.Error("record left after restore")
	}
	return restored
}

// daemonSet is a RollingUpdate DaemonSet (max-unavailable 1) at template
// generation 4.
func daemonSet() *appsv1.DaemonSet {
	one := intstr.FromInt32(1)
	rolling := appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &one}}
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent", UID: "ds-uid", ResourceVersion: "7",
		Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "4"}},
		Spec: appsv1.DaemonSetSpec{Template: podTemplate(), UpdateStrategy: rolling}}
}

func TestRevisionLabelPatch(t *testing.T) {
	for _, labels := range []map[string]string{nil, {"app": "web", RevisionLabel: "db-old"}} {
		pod := webPod()
		pod.Labels = labels
		patch, err := RevisionLabelPatch(pod, "db-7f9c")
		if err != nil {
			t.Fatal(err)
		}
		var got corev1.Pod
		mustApply(t, pod, patch, &got)
		want := map[string]string{RevisionLabel: "db-7f9c"}
		if labels != nil {
			want["app"] = "web"
		}
		if diff := cmp.Diff(want, got.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
	}
}

// TestAddedMapGuarded: adding a whole labels map is guarded by the
// resourceVersion, so labels added meanwhile are never wiped.
func TestAddedMapGuarded(t *testing.T) {
	pod := webPod()
	pod.Labels = nil
	patch, err := RevisionLabelPatch(pod, "db-7f9c")
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels, pod.ResourceVersion = map[string]string{"team": "shop"}, "101"
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err == nil {
		t.Errorf("patch applied over labels added meanwhile: %v", got.Labels)
	}
}
