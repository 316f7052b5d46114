package knative

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/inplace-dev/inplace/test/manifests"
)

// applier creates objects of any kind through the dynamic client, as
// `kubectl create` would, leaving those that exist alone.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(rc *rest.Config) (*applier, error) {
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// resource is the client for o's kind, in its namespace when namespaced.
func (a *applier) resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset()
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

// create creates each object; one that exists already is left as it is.
func (a *applier) create(ctx context.Context, objs ...*unstructured.Unstructured) error {
	for _, o := range objs {
		r, err := a.resource(o)
		if err != nil {
			return err
		}
		if _, err := r.Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// readFiles decodes every YAML file matching each glob, in order.
func readFiles(globs ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("no manifests at %s", g)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			objs, err := manifests.Decode(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

// waitCRDs waits until every CustomResourceDefinition among objs is
// Established, then forgets the cached discovery.
func (a *applier) waitCRDs(ctx context.Context, objs []*unstructured.Unstructured) error {
	crds := a.dyn.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			u, err := crds.Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
				return false, err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", o.GetName(), err)
		}
	}
	a.mapper.Reset()
	return nil
}
