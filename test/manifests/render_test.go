package manifests_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inplace-dev/inplace/test/manifests"
)

func TestEveryKustomizationRenders(t *testing.T) {
	dirs, err := manifests.Kustomizations(filepath.Join(root(t), "config"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("only %d kustomizations under config/", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(rel(t, dir), func(t *testing.T) {
			objs := render(t, dir)
			if len(objs) == 0 {
				t.Fatal("renders nothing")
			}
			for _, o := range objs {
				if o.GetKind() == "" || o.GetName() == "" || o.GetAPIVersion() == "" {
					t.Errorf("object without apiVersion, kind or name: %v", o.Object)
				}
			}
		})
	}
}

// TestOverlayContents pins what each overlay installs, by kind.
func TestOverlayContents(t *testing.T) {
	want := map[string]map[string]int{
		"plain": {"Namespace": 2, "ConfigMap": 4, "ServiceAccount": 5, "Deployment": 5, "Service": 1, "Job": 1,
			"ClusterRole": 5, "ClusterRoleBinding": 5, "Role": 3, "RoleBinding": 5,
			"ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2},
		"knative": {"Namespace": 2, "ConfigMap": 5, "ServiceAccount": 6, "ClusterRole": 6, "ClusterRoleBinding": 5,
			"Role": 3, "RoleBinding": 5, "Broker": 1, "Trigger": 4, "ApiServerSource": 1, "SinkBinding": 1, "Service": 5, "NetworkPolicy": 1,
			"ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2},
		"nats": {"Namespace": 2, "ConfigMap": 1, "Service": 2, "StatefulSet": 1, "PodDisruptionBudget": 1},
	}
	for name, kinds := range want {
		t.Run(name, func(t *testing.T) {
			got := map[string]int{}
			for _, o := range render(t, filepath.Join(root(t), "config", "overlays", name)) {
				got[o.GetKind()]++
			}
			if diff := cmp.Diff(kinds, got); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImageTransformer checks that an overlay's `images:` reaches every
// container of the project's image, Knative Services included.
func TestImageTransformer(t *testing.T) {
	for _, overlay := range []string{"plain", "knative", "func"} {
		t.Run(overlay, func(t *testing.T) {
			dir := t.TempDir()
			base, err := filepath.Rel(dir, filepath.Join(root(t), "config", "overlays", overlay))
			if err != nil {
				t.Fatal(err)
			}
			k := "resources:\n  - " + base +
				"\nimages:\n  - name: ghcr.io/inplace-dev/inplace\n    newName: registry.example/inplace\n    newTag: v9.9.9\n"
			if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, o := range render(t, dir) {
				for _, img := range images(t, o) {
					if strings.Contains(img, "nats:") {
						continue
					}
					n++
					if img != "registry.example/inplace:v9.9.9" {
						t.Errorf("%s: image %s not transformed", key(o), img)
					}
				}
			}
			if n == 0 {
				t.Error("no inplace image in the overlay")
			}
		})
	}
}

// images lists the container images of a workload or Knative Service.
func images(t *testing.T, o *unstructured.Unstructured) []string {
	t.Helper()
	spec := podSpec(t, o)
	if spec == nil {
		return nil
	}
	var out []string
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		out = append(out, c.Image)
	}
	return out
}

// podSpec is the pod template's spec of a Deployment, StatefulSet or
// Knative Service; nil for anything else.
func podSpec(t *testing.T, o *unstructured.Unstructured) *corev1.PodSpec {
	t.Helper()
	var tmpl map[string]any
	switch o.GetKind() {
	case "Deployment", "StatefulSet":
		tmpl, _, _ = unstructured.NestedMap(o.Object, "spec", "template")
	case "Service":
		if !isKnative(o) {
			return nil
		}
		tmpl, _, _ = unstructured.NestedMap(o.Object, "spec", "template")
	default:
		return nil
	}
	var pt corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pt); err != nil {
		t.Fatalf("%s: pod template: %v", key(o), err)
	}
	return &pt.Spec
}

// TestOneServiceAccountPerFunction checks that each function runs under
// its own ServiceAccount, named after it, in every overlay that runs it.
func TestOneServiceAccountPerFunction(t *testing.T) {
	for _, overlay := range []string{"plain", "knative"} {
		t.Run(overlay, func(t *testing.T) {
			objs := render(t, filepath.Join(root(t), "config", "overlays", overlay))
			var got []string
			for _, o := range objs {
				spec := podSpec(t, o)
				if spec == nil || o.GetKind() == "StatefulSet" {
					continue
				}
				comp := o.GetLabels()["app.kubernetes.io/component"]
				if spec.ServiceAccountName != "inplace-"+comp {
					t.Errorf("%s runs as %q, want inplace-%s", key(o), spec.ServiceAccountName, comp)
				}
				if named(objs, "ServiceAccount", spec.ServiceAccountName) == nil {
					t.Errorf("%s: ServiceAccount %s is not in the overlay", key(o), spec.ServiceAccountName)
				}
				got = append(got, comp)
			}
			sort.Strings(got)
			want := []string{"compute-spec", "patch-pod", "pre-pull", "receiver", "verify"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlainArgs checks each plain Deployment runs exactly its function,
// and that the pod watcher and the registry poller run once, with
// compute-spec.
func TestPlainArgs(t *testing.T) {
	want := map[string][]string{
		"inplace-receiver":     {"run", "--functions=receiver", "--watch-pods=false", "--hooks-config=/etc/inplace/hooks/receiver.yaml"},
		"inplace-compute-spec": {"run", "--functions=compute-spec,poller", "--watch-pods=true"},
		"inplace-pre-pull":     {"run", "--functions=pre-pull", "--watch-pods=false"},
		"inplace-patch-pod":    {"run", "--functions=patch-pod", "--watch-pods=false"},
		"inplace-verify":       {"run", "--functions=verify", "--watch-pods=false"},
	}
	got := map[string][]string{}
	for _, o := range render(t, filepath.Join(root(t), "config", "overlays", "plain")) {
		if o.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
			t.Fatal(err)
		}
		got[d.Name] = d.Spec.Template.Spec.Containers[0].Args
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}
