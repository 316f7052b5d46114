package install_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/world"
)

// writeOverlay writes my-inplace/kustomization.yaml as step 3 does, on the
// plain-nats overlay of this checkout, with the images make image printed.
func writeOverlay(t *testing.T, dir, images string) {
	t.Helper()
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(dir, "my-inplace"), filepath.Join(root, "config", "overlays", "plain-nats"))
	if err != nil {
		t.Fatal(err)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + rel + "\n" + images
	if err := os.MkdirAll(filepath.Join(dir, "my-inplace"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "my-inplace", "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
}

// defaultStorage gives the cluster what plain-nats needs and the test
// world lacks: a default StorageClass, here of three hostPath volumes.
func defaultStorage(ctx context.Context, t *testing.T, w *world.World) {
	t.Helper()
	sc := `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"local","annotations":` +
		`{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"kubernetes.io/no-provisioner",` +
		`"volumeBindingMode":"WaitForFirstConsumer"}`
	if err := w.Client().StorageV1().RESTClient().Post().AbsPath("/apis/storage.k8s.io/v1/storageclasses").
		Body([]byte(sc)).SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		dir := filepath.Join(base, fmt.Sprintf("pv-%d", i))
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("install-pv-%d", i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName:              "local",
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
			},
		}
		if _, err := w.Client().CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
