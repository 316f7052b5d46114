package inplace

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

func podTemplate() corev1.PodTemplateSpec {
	w := webPod()
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: w.Spec}
}

func newImages() map[string]string {
	return map[string]string{"app": "nginx:1.25.1@" + dgNew, "proxy": "docker.io/library/nginx:1.25.1@" + dgNew}
}

func syncedImages() map[string]string {
	return map[string]string{"init-db": "nginx:1.24.0", "proxy": "docker.io/library/nginx:1.25.1@" + dgNew,
		"app": "nginx:1.25.1@" + dgNew, "metrics": "prom/statsd-exporter:v0.26.0"}
}

func deployment(paused bool) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "dep-uid",
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: new(int32(3)), Paused: paused, Template: podTemplate()},
	}
}

func TestTemplateImages(t *testing.T) {
	want := map[string]string{"init-db": "nginx:1.24.0", "proxy": "docker.io/library/nginx:1.24.0",
		"app": "nginx:1.24.0", "metrics": "prom/statsd-exporter:v0.26.0"}
	if diff := cmp.Diff(want, TemplateImages(webPod().Spec)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDeploymentSync(t *testing.T) {
	for _, wasPaused := range []bool{false, true} {
		t.Run(map[bool]string{false: "running", true: "already paused"}[wasPaused], func(t *testing.T) {
			d := deployment(wasPaused)
			patch, err := DeploymentSyncPatch(d, "up-1", newImages(), "")
			if err != nil {
				t.Fatal(err)
			}
			if !wasPaused {
				golden(t, "sync_deployment", patch)
			}
			var synced appsv1.Deployment
			mustApply(t, d, patch, &synced)
			if diff := cmp.Diff(syncedImages(), TemplateImages(synced.Spec.Template.Spec)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
			if !synced.Spec.Paused {
				t.Error("not paused after the sync")
			}
			wantRec := &SyncRecord{UpgradeID: "up-1", Paused: new(wasPaused),
				PreviousImages: map[string]string{"app": "nginx:1.24.0", "proxy": "docker.io/library/nginx:1.24.0"}}
			rec, err := ParseSyncRecord(synced.ObjectMeta)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantRec, rec); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			// Repeated after a crash: the record of the first attempt stays.
			again, err := DeploymentSyncPatch(&synced, "up-1", newImages(), "")
			if err != nil {
				t.Fatal(err)
			}
			var twice appsv1.Deployment
			mustApply(t, &synced, again, &twice)
			if diff := cmp.Diff(synced.Annotations, twice.Annotations); diff != "" {
				t.Errorf("repeated sync changed annotations (-want +got):\n%s", diff)
			}
			restore, err := DeploymentRestorePatch(&twice)
			if err != nil {
				t.Fatal(err)
			}
			var restored appsv1.Deployment
			mustApply(t, &twice, restore, &restored)
			if restored.Spec.Paused != wasPaused {
				t.Errorf("paused = %v after restore; want %v", restored.Spec.Paused, wasPaused)
			}
			if diff := cmp.Diff(map[string]string{"deployment.kubernetes.io/revision": "1"}, restored.Annotations); diff != "" {
				t.Errorf("annotations after restore (-want +got):\n%s", diff)
			}
			if _, err := DeploymentRestorePatch(&restored); !errors.Is(err, ErrAlreadyApplied) {
				t.Errorf("second restore error = %v; want ErrAlreadyApplied", err)
			}
		})
	}
}

func TestSyncRefuses(t *testing.T) {
	busy := deployment(false)
	busy.Annotations[SyncAnnotation] = `{"upgradeID":"up-0","previousImages":{}}`
	broken := deployment(false)
	broken.Annotations[SyncAnnotation] = `{`
	tests := []struct {
		name      string
		d         *appsv1.Deployment
		images    map[string]string
		is        error
		permanent bool
	}{
		{"another sync not restored", busy, newImages(), ErrBusy, false},
		{"malformed record", broken, newImages(), nil, true},
		{"container not in template", deployment(false), map[string]string{"sidecar": "x:1"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DeploymentSyncPatch(tt.d, "up-1", tt.images, "")
			if err == nil {
				t.Fatal("accepted")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if got := errors.Is(err, settle.ErrPermanent); got != tt.permanent {
				t.Errorf("permanent = %v; want %v (%v)", got, tt.permanent, err)
			}
		})
	}
}

func TestSyncPatchTestsCurrentImages(t *testing.T) {
	d := deployment(false)
	patch, err := DeploymentSyncPatch(d, "up-1", newImages(), "")
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.24.5" // someone edited the template meanwhile
	var got appsv1.Deployment
	if err := apply(t, d, patch, &got); err == nil || !strings.Contains(err.Error(), "test") {
		t.Errorf("apply error = %v; want a failed test operation", err)
	}
}

func TestReplicaSetSyncMatchesDeployment(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-5d8f", UID: "rs-uid"},
		Spec: appsv1.ReplicaSetSpec{Template: podTemplate()}}
	rs.Spec.Template.Labels["pod-template-hash"] = "5d8f"
	patch, err := ReplicaSetSyncPatch(rs, newImages(), "")
	if err != nil {
		t.Fatal(err)
	}
	var got appsv1.ReplicaSet
	mustApply(t, rs, patch, &got)
	if diff := cmp.Diff(syncedImages(), TemplateImages(got.Spec.Template.Spec)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	if got.Spec.Template.Labels["pod-template-hash"] != "5d8f" {
		t.Error("pod-template-hash changed")
	}
}

func mustApply(t *testing.T, obj any, patch []byte, out any) {
	t.Helper()
	if err := apply(t, obj, patch, out); err != nil {
		t.Fatalf("apply: %v\n%s", err, patch)
	}
}
