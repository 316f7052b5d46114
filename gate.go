package function

import (
	"context"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube/watcher"
)

// gateOpener is the pod watcher's gate step in Knative mode, where an
// ApiServerSource stands in for the watcher: a pod that declares the
// inplace.dev/ready gate but carries no condition and has no upgrade in
// flight gets the condition True, or it would never become Ready. Only the
// service running verify does it (its role may patch pods/status).
type gateOpener struct {
	client kubernetes.Interface
	now    func() time.Time
}

// open acts on a pod.updated (an adapted ApiServerSource update); other
// events pass. A pod that changed since the event is left to the event of
// its newer state.
func (g *gateOpener) open(ctx context.Context, e cloudevents.Event) error {
	if g == nil || e.Type() != events.PodUpdated {
		return nil
	}
	d, err := events.As[events.PodUpdatedData](e)
	if err != nil {
		return err
	}
	pod := &d.Pod
	if !watcher.NeedsGate(pod) {
		return nil
	}
	patch, err := inplace.InitGatePatch(pod, g.now())
	if err != nil {
		return nil // already set, or an upgrade took the pod meanwhile
	}
	_, err = g.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: watcher.FieldManager}, "status")
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err), inplace.PreconditionFailed(err):
		return nil
	}
	return fmt.Errorf("function: open the readiness gate of %s/%s: %w", pod.Namespace, pod.Name, err)
}
