package watcher

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// FieldManager names the watcher's writes.
const FieldManager = "inplace-pod-watcher"

// openGate gives the pod (as the informer has it now) the gate condition
// True, unless that is no longer needed.
func (w *Watcher) openGate(ctx context.Context, key string) error {
	obj, ok, err := w.pods.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || !NeedsGate(pod) {
		return nil
	}
	patch, err := inplace.InitGatePatch(pod, w.opts.Clock.Now())
	if err != nil { // ErrAlreadyApplied or an upgrade in flight: not ours to set
		return nil
	}
	_, err = w.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case inplace.PreconditionFailed(err), apierrors.IsConflict(err):
		return fmt.Errorf("open gate of %s: the pod changed: %w", key, errRetry) // the informer has or will have the new pod
	case err != nil:
		return fmt.Errorf("open gate of %s: %w", key, err)
	}
	w.opts.Log.Info("readiness gate opened", "pod", key)
	return nil
}

// errRetry asks the queue to try the item again.
var errRetry = errors.New("try again")
