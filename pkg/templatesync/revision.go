package templatesync

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/inplace-dev/inplace/pkg/inplace"
)

// relabel sets every pod's controller-revision-hash to revision, so the
// StatefulSet or DaemonSet controller counts it as updated. A pod that
// already carries it is left alone; a pod gone meanwhile is skipped.
func (s *Syncer) relabel(ctx context.Context, pods []corev1.Pod, revision string) error {
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Labels[inplace.RevisionLabel] == revision {
			continue
		}
		body, err := inplace.RevisionLabelPatch(pod, revision)
		err = apply(ctx, s.Client.CoreV1().Pods(pod.Namespace).Patch, pod.Name, body, err)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("relabel pod %s: %w", pod.Name, err)
		}
	}
	return nil
}
