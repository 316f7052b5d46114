package manifests_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/inplace-dev/inplace/cmd/inplace/cli"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/test/world"
)

// TestNamespacedRoleBindings: with the RoleBindings `inplace
// rbac-namespaced` prints instead of their ClusterRoleBindings, patch-pod
// and verify may write pods in the namespaces named, and nowhere else.
func TestNamespacedRoleBindings(t *testing.T) {
	w := world.Shared(t)
	ns, optedNS, otherNS := w.NewNamespace(t), w.NewNamespace(t), w.NewNamespace(t)
	ids := applyRBAC(t, w, ns)
	for _, fn := range []string{"patch-pod", "verify"} {
		if err := w.Client().RbacV1().ClusterRoleBindings().Delete(t.Context(), "inplace-"+fn+"-"+ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	root := cli.NewRoot()
	root.SetArgs([]string{"rbac-namespaced", optedNS, "--system-namespace", ns})
	root.SetOut(&out)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	a := newApplier(t, w)
	r := utilyaml.NewYAMLOrJSONDecoder(&out, 4096)
	for {
		var o unstructured.Unstructured
		if err := r.Decode(&o.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(o.Object) == 0 {
			continue
		}
		if err := a.apply(t.Context(), moved(t, &o, ns)); err != nil {
			t.Fatalf("apply %s: %v", key(&o), err)
		}
	}
	img := fntest.Push(t, w, optedNS+"/app", "1.0.0")
	opted := fntest.Create(t, w, fntest.Pod(optedNS, "web", img.Ref, false))
	other := fntest.Create(t, w, fntest.Pod(otherNS, "web", img.Ref, false))
	for _, fn := range []string{"patch-pod", "verify"} {
		c := ids[fn].client
		if err := annotate(t.Context(), c, opted, "inplace.dev/state", "{}", true); err != nil {
			t.Errorf("%s in the namespace named: %v", fn, err)
		}
		if err := annotate(t.Context(), c, other, "inplace.dev/state", "{}", true); !apierrors.IsForbidden(err) {
			t.Errorf("%s in another namespace: err = %v; want Forbidden", fn, err)
		}
	}
}
