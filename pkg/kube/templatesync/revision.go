package templatesync

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// relabelParallel bounds the label patches in flight at once: the time
// the controller counts fewer pods updated is the time they take.
const relabelParallel = 8

// relabel sets every pod's controller-revision-hash to revision, so the
// StatefulSet or DaemonSet controller counts it as updated. A pod that
// already carries it is left alone; a pod gone meanwhile is skipped.
func (s *Syncer) relabel(ctx context.Context, pods []corev1.Pod, revision string) error {
	return s.setLabel(ctx, pods, inplace.RevisionLabel, revision)
}

// setLabel sets one label on every live pod that lacks that value, several
// pods at a time.
func (s *Syncer) setLabel(ctx context.Context, pods []corev1.Pod, key, value string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(relabelParallel)
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Labels[key] == value {
			continue
		}
		g.Go(func() error {
			body, err := inplace.LabelPatch(pod, key, value)
			err = sendBuilt(ctx, s.Client.CoreV1().Pods(pod.Namespace).Patch, pod.Name, body, err)
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("label pod %s %s=%s: %w", pod.Name, key, value, err)
			}
			return nil
		})
	}
	return g.Wait()
}
