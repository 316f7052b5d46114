package manifests_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/world"
)

// defaultNamespace is the namespace config/ is written for; the pre-pull
// pods have their own, moved to the test's namespace too.
const (
	defaultNamespace = "inplace-system"
	prepullNamespace = "inplace-prepull"
)

// identity is a ServiceAccount of config/rbac and a kubeconfig minted for it.
type identity struct {
	kubeconfig string
	client     kubernetes.Interface
}

// applyRBAC creates the objects of the config/rbac kustomization, moved
// from inplace-system to ns (cluster-scoped names and the references to
// them get "-<ns>" appended, removed when the test ends), and mints a
// kubeconfig for each of its ServiceAccounts.
func applyRBAC(t *testing.T, w *world.World, ns string) map[string]identity {
	t.Helper()
	a := newApplier(t, w)
	var sas []string
	for _, o := range render(t, filepath.Join(root(t), "config", "rbac")) {
		o = moved(t, o, ns)
		if err := a.apply(t.Context(), o); err != nil {
			t.Fatalf("create %s: %v", key(o), err)
		}
		if o.GetNamespace() == "" {
			t.Cleanup(func() { a.delete(o) })
		}
		if o.GetKind() == "ServiceAccount" {
			sas = append(sas, o.GetName())
		}
	}
	ids := map[string]identity{}
	for _, sa := range sas {
		path, rc, err := w.Cluster.MintKubeconfig(t.Context(), ns, sa)
		if err != nil {
			t.Fatal(err)
		}
		c, err := kubernetes.NewForConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		ids[strings.TrimPrefix(sa, "inplace-")] = identity{kubeconfig: path, client: c}
	}
	return ids
}

// moved is o in ns instead of inplace-system.
func moved(t *testing.T, o *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	t.Helper()
	o = o.DeepCopy()
	if o.GetNamespace() == defaultNamespace || o.GetNamespace() == prepullNamespace {
		o.SetNamespace(ns)
	}
	switch o.GetKind() {
	case "ClusterRole", "ClusterRoleBinding":
		o.SetName(o.GetName() + "-" + ns)
	}
	if kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind"); kind == "ClusterRole" {
		name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
		if err := unstructured.SetNestedField(o.Object, name+"-"+ns, "roleRef", "name"); err != nil {
			t.Fatal(err)
		}
	}
	subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
	for _, s := range subjects {
		if m := s.(map[string]any); m["namespace"] == defaultNamespace {
			m["namespace"] = ns
		}
	}
	if subjects != nil {
		if err := unstructured.SetNestedSlice(o.Object, subjects, "subjects"); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// apply creates or updates o for real (server-side apply).
func (a *applier) apply(ctx context.Context, o *unstructured.Unstructured) error {
	ri, body, err := a.resource(o)
	if err != nil {
		return err
	}
	force := true
	_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager: "inplace-manifests-test", Force: &force, FieldValidation: metav1.FieldValidationStrict,
	})
	return err
}

func (a *applier) delete(o *unstructured.Unstructured) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ri, _, err := a.resource(o); err == nil {
		_ = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
	}
}
