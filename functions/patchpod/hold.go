package patchpod

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// labelAhead adds to an image patch of a StatefulSet's pod the
// controller-revision-hash its template sync will make, while the
// StatefulSet is held for this upgrade (inplace.HeldRevision: the hold
// names it, the controller observed it, the pod is below the partition):
// the sync then has no pod to relabel. Read from the cache, like the pod;
// anything else leaves the patch as it is.
func (s *step) labelAhead(ctx context.Context, pod *corev1.Pod, patch []byte) ([]byte, error) {
	if s.plan.Owner.Kind != "StatefulSet" || s.plan.Restart != nil || s.plan.Resize != nil {
		return patch, nil
	}
	w, found, err := s.f.d.Reader.Owner(ctx, pod)
	if err != nil {
		return nil, fmt.Errorf("patch pod %s: read its StatefulSet: %w", s.plan.Pod, err)
	}
	sts, _ := w.Object.(*appsv1.StatefulSet)
	if !found || sts == nil || string(sts.UID) != s.plan.Owner.UID {
		return patch, nil
	}
	revision, ok := inplace.HeldRevision(sts, pod, s.plan.UpgradeID)
	if !ok || pod.Labels[inplace.RevisionLabel] == revision {
		return patch, nil
	}
	return inplace.RevisionOps(patch, pod, revision)
}
