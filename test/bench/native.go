package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/kubectl/pkg/polymorphichelpers"
)

// rolloutStatus waits as `kubectl rollout status` does (its status viewer,
// over a watch of the one object) until the workload's rollout is
// complete.
func rolloutStatus(ctx context.Context, dyn dynamic.Interface, kind, ns, name string) error {
	gk := schema.GroupKind{Group: "apps", Kind: kind}
	viewer, err := polymorphichelpers.StatusViewerFor(gk)
	if err != nil {
		return err
	}
	res := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: resourceOf(kind)}).Namespace(ns)
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return res.Watch(ctx, o)
		},
	}
	_, err = watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, nil, func(e watch.Event) (bool, error) {
		switch e.Type {
		case watch.Added, watch.Modified:
			_, done, err := viewer.Status(e.Object.(runtime.Unstructured), 0)
			return done, err
		case watch.Deleted:
			return false, fmt.Errorf("%s %s/%s deleted", kind, ns, name)
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("rollout status %s %s/%s: %w", kind, ns, name, err)
	}
	return nil
}

func resourceOf(kind string) string {
	switch kind {
	case "StatefulSet":
		return "statefulsets"
	case "DaemonSet":
		return "daemonsets"
	}
	return "deployments"
}
