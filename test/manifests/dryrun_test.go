package manifests_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/inplace-dev/inplace/test/world"
)

// applier server-side applies objects with a dry run: the API server
// admits, defaults and validates them (strict field validation: an unknown
// field is an error) and stores nothing.
type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newApplier(t *testing.T, w *world.World) *applier {
	t.Helper()
	rc := w.RestConfig()
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// resource is the dynamic client of o's resource, and o as JSON.
func (a *applier) resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, []byte, error) {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, nil, err
	}
	var ri dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = a.dyn.Resource(m.Resource).Namespace(o.GetNamespace())
	}
	body, err := json.Marshal(o.Object)
	return ri, body, err
}

func (a *applier) dryRun(ctx context.Context, o *unstructured.Unstructured) error {
	ri, body, err := a.resource(o)
	if err != nil {
		return err
	}
	force := true
	_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: "inplace-manifests-test", Force: &force,
		FieldValidation: metav1.FieldValidationStrict,
	})
	return err
}

// TestServerSideDryRun applies every object of every overlay to the test
// world's kube-apiserver with a server-side dry run: core objects against
// Kubernetes' own schemas and admission, Knative objects against the
// OpenAPI schemas of Knative's CRDs (installed from the Knative modules).
func TestServerSideDryRun(t *testing.T) {
	w := world.Shared(t)
	installCRDs(t, w)
	ctx := t.Context()
	// Namespaced objects need their namespace to exist, even in a dry run.
	for _, name := range []string{defaultNamespace, prepullNamespace} {
		_, err := w.Client().CoreV1().Namespaces().Create(ctx,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	a := newApplier(t, w)
	n := map[bool]int{}
	for _, dir := range overlays(t) {
		for _, o := range render(t, dir) {
			t.Run(filepath.Base(dir)+"/"+key(o), func(t *testing.T) {
				if err := a.dryRun(ctx, o); err != nil {
					t.Fatalf("the API server refuses it: %v", err)
				}
				n[isKnative(o)]++
			})
		}
	}
	t.Logf("accepted %d core and %d Knative objects", n[false], n[true])
	if n[false] == 0 || n[true] == 0 {
		t.Fatal("nothing checked")
	}
}

// TestDryRunCanFail shows the dry run is strict: an unknown field in a
// Knative Service and in a Deployment is refused.
func TestDryRunCanFail(t *testing.T) {
	w := world.Shared(t)
	installCRDs(t, w)
	a := newApplier(t, w)
	objs := render(t, filepath.Join(root(t), "config", "overlays", "knative"))
	for _, name := range []string{"inplace-verify"} {
		ksvc := named(objs, "Service", name).DeepCopy()
		if err := unstructured.SetNestedField(ksvc.Object, "yes", "spec", "template", "spec", "containers0"); err != nil {
			t.Fatal(err)
		}
		if err := a.dryRun(t.Context(), ksvc); err == nil {
			t.Errorf("a Knative Service with an unknown field was accepted")
		}
	}
	plain := render(t, filepath.Join(root(t), "config", "overlays", "plain"))
	d := named(plain, "Deployment", "inplace-verify").DeepCopy()
	if err := unstructured.SetNestedField(d.Object, int64(1), "spec", "replica"); err != nil {
		t.Fatal(err)
	}
	if err := a.dryRun(t.Context(), d); err == nil {
		t.Errorf("a Deployment with an unknown field was accepted")
	}
}
