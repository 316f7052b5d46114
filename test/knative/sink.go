package knative

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"knative.dev/pkg/tracker"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
)

// SinkBindings of Knative Eventing.
var SinkBindings = schema.GroupVersionResource{Group: "sources.knative.dev", Version: "v1", Resource: "sinkbindings"}

// sinkFor does what SinkBinding's webhook would for svc: the address of
// the sink of the one SinkBinding whose subject selects it, or "" when
// none does.
func (n *Node) sinkFor(ctx context.Context, svc *servingv1.Service) (string, error) {
	list, err := n.apply.dyn.Resource(SinkBindings).Namespace(svc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	var found []string
	for _, u := range list.Items {
		var sb sourcesv1.SinkBinding
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sb); err != nil {
			return "", fmt.Errorf("sinkbinding %s: %w", u.GetName(), err)
		}
		if !selects(sb.Spec.Subject, svc) {
			continue
		}
		uri := ""
		if sb.Spec.Sink.URI != nil {
			uri = sb.Spec.Sink.URI.String()
		}
		sink, err := n.resolve(ctx, sb.Namespace, sb.Spec.Sink.Ref, uri)
		if err != nil {
			return "", fmt.Errorf("sinkbinding %s: %w", sb.Name, err)
		}
		found = append(found, sink)
	}
	if len(found) > 1 {
		return "", fmt.Errorf("%d SinkBindings select it", len(found))
	}
	if len(found) == 0 {
		return "", nil
	}
	return found[0], nil
}

func selects(s tracker.Reference, svc *servingv1.Service) bool {
	if s.APIVersion != servingv1.SchemeGroupVersion.String() || s.Kind != "Service" {
		return false
	}
	if s.Name != "" {
		return s.Name == svc.Name
	}
	if s.Selector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(s.Selector)
	return err == nil && sel.Matches(labels.Set(svc.Labels))
}

// resolve is the address of an Addressable ref (status.address.url) or
// the URI.
func (n *Node) resolve(ctx context.Context, ns string, ref *duckv1.KReference, uri string) (string, error) {
	if ref == nil {
		return uri, nil
	}
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(ref.APIVersion)
	o.SetKind(ref.Kind)
	o.SetNamespace(ns)
	r, err := n.apply.resource(o)
	if err != nil {
		return "", err
	}
	u, err := r.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	addr := Address(u)
	if addr == "" {
		return "", fmt.Errorf("%s %s/%s has no address yet", ref.Kind, ns, ref.Name)
	}
	return addr, nil
}
