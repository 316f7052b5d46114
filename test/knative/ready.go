package knative

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Resources of Knative the node waits on.
var (
	Brokers          = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "brokers"}
	Triggers         = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "triggers"}
	ApiServerSources = schema.GroupVersionResource{Group: "sources.knative.dev", Version: "v1", Resource: "apiserversources"}
	Services         = schema.GroupVersionResource{Group: "serving.knative.dev", Version: "v1", Resource: "services"}
	InMemoryChannels = schema.GroupVersionResource{Group: "messaging.knative.dev", Version: "v1", Resource: "inmemorychannels"}
)

// WaitReady waits until the object's Ready condition is True and returns
// it. On timeout the error carries its conditions; a component that
// exited meanwhile fails the wait at once.
func (n *Node) WaitReady(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, within time.Duration) (*unstructured.Unstructured, error) {
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		if err := n.Check(); err != nil {
			return false, err
		}
		u, err := n.apply.dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		last = u
		return readyStatus(u) == "True", nil
	})
	if err != nil {
		var conds any
		if last != nil {
			conds, _, _ = unstructured.NestedSlice(last.Object, "status", "conditions")
		}
		return nil, fmt.Errorf("%s %s/%s not Ready within %s: %w; conditions: %v", gvr.Resource, namespace, name, within, err, conds)
	}
	return last, nil
}

// readyStatus is the status of u's Ready condition ("" when absent).
func readyStatus(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// Address is status.address.url of an Addressable.
func Address(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", "address", "url")
	return s
}
