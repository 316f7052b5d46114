package inplace

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/pkg/core/resize"
)

func cpuAsk(q string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
}

// sizedTemplate is podTemplate with app asking 100m CPU.
func sizedTemplate() corev1.PodTemplateSpec {
	t := podTemplate()
	t.Spec.Containers[0].Resources = cpuAsk("100m")
	return t
}

func resized() map[string]corev1.ResourceRequirements {
	return map[string]corev1.ResourceRequirements{"app": cpuAsk("250m")}
}

// checkResized: app asks 250m, every other container and every image is
// unchanged, and the record is the resize's (no previous images).
func checkResized(t *testing.T, before, after corev1.PodTemplateSpec, meta metav1.ObjectMeta) {
	t.Helper()
	if !TemplateShowsResources(after.Spec, resized()) {
		t.Errorf("template asks %s; want cpu 250m", resize.String(after.Spec.Containers[0].Resources))
	}
	if got := after.Spec.Containers[1].Resources; !resize.Equal(&got, &before.Spec.Containers[1].Resources) {
		t.Errorf("metrics resources changed to %s", resize.String(got))
	}
	if diff := cmp.Diff(TemplateImages(before.Spec), TemplateImages(after.Spec)); diff != "" {
		t.Errorf("a resize changed images (-before +after):\n%s", diff)
	}
	rec, err := ParseSyncRecord(meta)
	if err != nil || rec == nil || rec.UpgradeID != "z-1" || len(rec.PreviousImages) != 0 {
		t.Errorf("record %+v (%v); want resize z-1 with no previous images", rec, err)
	}
	if got := meta.Annotations[ChangeCauseAnnotation]; got != "inplace resize z-1" {
		t.Errorf("change-cause %q", got)
	}
}

func TestStatefulSetResizeSync(t *testing.T) {
	two := intstr.FromInt32(2)
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(int32(0)), MaxUnavailable: &two}}
	sts := statefulSet(rolling)
	sts.Spec.Template = sizedTemplate()
	patch, err := StatefulSetResizeSyncPatch(sts, "z-1", resized(), "inplace resize z-1")
	if err != nil {
		t.Fatal(err)
	}
	var synced appsv1.StatefulSet
	mustApply(t, sts, patch, &synced)
	checkResized(t, sts.Spec.Template, synced.Spec.Template, synced.ObjectMeta)
	want := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(int32(3)), MaxUnavailable: &two}}
	if diff := cmp.Diff(want, synced.Spec.UpdateStrategy); diff != "" {
		t.Errorf("strategy after sync (-want +got):\n%s", diff)
	}
	// Another writer changed the resources meanwhile: the patch does not apply.
	moved := sts.DeepCopy()
	moved.Spec.Template.Spec.Containers[0].Resources = cpuAsk("150m")
	if err := apply(t, moved, patch, &appsv1.StatefulSet{}); err == nil {
		t.Error("the resize sync applied over resources changed meanwhile")
	}
	// A repeat after a crash keeps the first record (the strategy before).
	restored := repeatThenRestore(t, &synced, func(sts *appsv1.StatefulSet) ([]byte, error) {
		return StatefulSetResizeSyncPatch(sts, "z-1", resized(), "inplace resize z-1")
	}, StatefulSetRestorePatch)
	if diff := cmp.Diff(rolling, restored.Spec.UpdateStrategy); diff != "" {
		t.Errorf("strategy after restore (-want +got):\n%s", diff)
	}
	if !TemplateShowsResources(restored.Spec.Template.Spec, resized()) {
		t.Error("the restore took the resources back")
	}
}

func TestDaemonSetResizeSync(t *testing.T) {
	ds := daemonSet()
	ds.Spec.Template = sizedTemplate()
	rolling := *ds.Spec.UpdateStrategy.DeepCopy()
	patch, err := DaemonSetResizeSyncPatch(ds, "z-1", resized(), "inplace resize z-1")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "resize_sync_daemonset", patch)
	var synced appsv1.DaemonSet
	mustApply(t, ds, patch, &synced)
	checkResized(t, ds.Spec.Template, synced.Spec.Template, synced.ObjectMeta)
	if diff := cmp.Diff(rolling, synced.Spec.UpdateStrategy); diff != "" {
		t.Errorf("strategy changed by the sync (-want +got):\n%s", diff)
	}
	if rec, _ := ParseSyncRecord(synced.ObjectMeta); rec == nil || rec.TemplateGeneration == nil || *rec.TemplateGeneration != 4 {
		t.Errorf("record %+v; want template generation 4", rec)
	}
	// The pods were labelled for generation 5: a template changed meanwhile
	// (generation 5 already) must not become 6 under them.
	moved := ds.DeepCopy()
	moved.Annotations[appsv1.DeprecatedTemplateGeneration] = "5"
	if err := apply(t, moved, patch, &appsv1.DaemonSet{}); err == nil {
		t.Error("the resize sync applied over a template generation the pods were not labelled for")
	}
	// Repeated after the API server raised the generation: nothing left to
	// change, so no generation test.
	synced.Annotations[appsv1.DeprecatedTemplateGeneration] = "5"
	restored := repeatThenRestore(t, &synced, func(ds *appsv1.DaemonSet) ([]byte, error) {
		return DaemonSetResizeSyncPatch(ds, "z-1", resized(), "inplace resize z-1")
	}, DaemonSetRestorePatch)
	if diff := cmp.Diff(rolling, restored.Spec.UpdateStrategy); diff != "" {
		t.Errorf("strategy after restore (-want +got):\n%s", diff)
	}
}

func TestDeploymentResizeSync(t *testing.T) {
	d := deployment(false)
	d.Spec.Template = sizedTemplate()
	patch, err := DeploymentResizeSyncPatch(d, "z-1", resized(), "inplace resize z-1")
	if err != nil {
		t.Fatal(err)
	}
	var synced appsv1.Deployment
	mustApply(t, d, patch, &synced)
	checkResized(t, d.Spec.Template, synced.Spec.Template, synced.ObjectMeta)
	if !synced.Spec.Paused {
		t.Error("not paused with the template")
	}
	restore, err := DeploymentRestorePatch(&synced)
	if err != nil {
		t.Fatal(err)
	}
	var restored appsv1.Deployment
	mustApply(t, &synced, restore, &restored)
	if restored.Spec.Paused {
		t.Error("left paused")
	}
	// Another upgrade's sync is not restored yet: busy.
	if _, err := DeploymentResizeSyncPatch(&synced, "z-2", resized(), ""); !errors.Is(err, ErrBusy) {
		t.Errorf("over another sync's record: %v; want ErrBusy", err)
	}

	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-5d4", UID: "rs-uid",
		Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"}}, Spec: appsv1.ReplicaSetSpec{Template: sizedTemplate()}}
	patch, err = ReplicaSetResizeSyncPatch(rs, resized(), "inplace resize z-1")
	if err != nil {
		t.Fatal(err)
	}
	var rsSynced appsv1.ReplicaSet
	mustApply(t, rs, patch, &rsSynced)
	if !TemplateShowsResources(rsSynced.Spec.Template.Spec, resized()) || rsSynced.Annotations[ChangeCauseAnnotation] != "inplace resize z-1" {
		t.Errorf("ReplicaSet template asks %s, change-cause %q", resize.String(rsSynced.Spec.Template.Spec.Containers[0].Resources),
			rsSynced.Annotations[ChangeCauseAnnotation])
	}
}

func TestResizeSyncRefusesAMissingContainer(t *testing.T) {
	sts := statefulSet(appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType})
	for _, name := range []string{"nope", "init-db"} {
		if _, err := StatefulSetResizeSyncPatch(sts, "z-1", map[string]corev1.ResourceRequirements{name: cpuAsk("1")}, ""); err == nil {
			t.Errorf("container %s: no error", name)
		}
	}
}

func TestTemplateShowsResources(t *testing.T) {
	spec := sizedTemplate().Spec
	tests := []struct {
		name string
		res  map[string]corev1.ResourceRequirements
		want bool
	}{
		{"same", map[string]corev1.ResourceRequirements{"app": cpuAsk("100m")}, true},
		{"same, spelled otherwise", map[string]corev1.ResourceRequirements{"app": cpuAsk("0.1")}, true},
		{"other cpu", resized(), false},
		{"no such container", map[string]corev1.ResourceRequirements{"nope": {}}, false},
		{"nothing asked", nil, true},
	}
	for _, tt := range tests {
		if got := TemplateShowsResources(spec, tt.res); got != tt.want {
			t.Errorf("%s: %v; want %v", tt.name, got, tt.want)
		}
	}
}
