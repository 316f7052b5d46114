package manifests_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inplace-dev/inplace/test/manifests"
)

// root is the repository root.
func root(t testing.TB) string {
	t.Helper()
	r, err := manifests.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// overlays lists config/overlays/*, the installable overlays.
func overlays(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root(t), "config", "overlays", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays under config/overlays: %v", err)
	}
	return dirs
}

// render renders dir and decodes it.
func render(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifests.Objects(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// rel names dir relative to the repository root.
func rel(t testing.TB, dir string) string {
	r, err := filepath.Rel(root(t), dir)
	if err != nil {
		return dir
	}
	return r
}

// moduleDir is where the go command keeps module mod (the version go.mod pins).
func moduleDir(t testing.TB, mod string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", mod, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatalf("module %s is not downloaded", mod)
	}
	return dir
}

// isKnative reports whether o belongs to a Knative API group.
func isKnative(o *unstructured.Unstructured) bool {
	return strings.HasSuffix(o.GroupVersionKind().Group, "knative.dev")
}

// named finds the object of kind and name in objs.
func named(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// key names an object for messages.
func key(o *unstructured.Unstructured) string {
	s := o.GetKind() + " "
	if o.GetNamespace() != "" {
		s += o.GetNamespace() + "/"
	}
	return s + o.GetName()
}
