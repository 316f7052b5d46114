package templatesync

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Hold holds a StatefulSet from its rollout's first plan (inplace/hold.go):
// partition = replicas, with the revision the sync will make for the images
// r's pods are planned to, so patch-pod labels each pod in its image write.
// sts is the StatefulSet as the caller's cache has it; the patch tests its
// resourceVersion. It returns the StatefulSet as the hold left it, or nil
// when nothing was written: held already, or no hold wanted (a GitOps tool
// owns the template, which the sync leaves alone; no pod planned yet; a
// planned container the template lacks; a template sync recorded).
func (s *Syncer) Hold(ctx context.Context, r *rollout.Rollout, sts *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
	if r.Workload.Kind != "StatefulSet" || r.Request() != nil || leftToGitOps(sts.ObjectMeta) {
		return nil, nil
	}
	next, ok := withImages(sts, styled(plannedImages(r), r.Options.TemplateReference))
	if !ok {
		return nil, nil
	}
	revision, err := inplace.StatefulSetRevisionName(next)
	if err != nil {
		return nil, err
	}
	body, err := inplace.StatefulSetHoldPatch(sts, r.UpgradeID, revision)
	if errors.Is(err, inplace.ErrBusy) {
		return nil, nil
	}
	return sendBuiltResult(ctx, s.Client.AppsV1().StatefulSets(sts.Namespace).Patch, sts.Name, body, err)
}

// leftToGitOps: a GitOps tool owns the workload and the sync will leave
// its template alone (gitOps).
func leftToGitOps(meta metav1.ObjectMeta) bool {
	if reason, _ := Manager(meta); reason == "" {
		return false
	}
	anyway, err := policy.SyncUnderGitOps(meta.Annotations)
	return err != nil || !anyway
}

// plannedImages are the images r's own plans move each container to.
func plannedImages(r *rollout.Rollout) map[string]string {
	images := map[string]string{}
	for _, p := range r.Pods {
		if p.UpgradeID != r.UpgradeID && p.UpgradeID != "" {
			continue
		}
		for _, c := range p.Containers {
			images[c.Name] = c.ToImage
		}
	}
	return images
}

// withImages is a copy of sts whose template has images; false when images
// is empty or names a container the template lacks.
func withImages(sts *appsv1.StatefulSet, images map[string]string) (*appsv1.StatefulSet, bool) {
	if len(images) == 0 {
		return nil, false
	}
	next := sts.DeepCopy()
	set := 0
	spec := &next.Spec.Template.Spec
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if img, ok := images[cs[i].Name]; ok {
				cs[i].Image = img
				set++
			}
		}
	}
	return next, set == len(images)
}

// Release ends r's hold of its StatefulSet when no sync will take it over:
// a halted rollout once no pod is in flight (compute-spec), a sync that
// ended without the template (not synced, or left to GitOps: Sync). Every pod
// labelled ahead with the held revision is labelled back with the
// controller's current revision (a pod that kept the new images then looks
// as it did before holds existed: on the old revision), then the strategy
// recorded before the hold is restored. In that order: released first, the
// controller would replace each pod labelled ahead.
func (s *Syncer) Release(ctx context.Context, r *rollout.Rollout) error {
	if r.Workload.Kind != "StatefulSet" {
		return nil
	}
	c := s.Client.AppsV1().StatefulSets(r.Workload.Namespace)
	sts, err := c.Get(ctx, r.Workload.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release hold of %s: %w", r.Workload, err)
	}
	rec, err := inplace.ParseSyncRecord(sts.ObjectMeta)
	if err != nil || rec == nil || !rec.Hold {
		return err
	}
	if back := sts.Status.CurrentRevision; back != "" && back != rec.Revision {
		pods, err := s.podsOf(ctx, sts.Namespace, sts.Spec.Selector)
		if err != nil {
			return err
		}
		ahead := pods[:0]
		for _, p := range pods {
			if p.Labels[inplace.RevisionLabel] == rec.Revision {
				ahead = append(ahead, p)
			}
		}
		if err := s.relabel(ctx, ahead, back); err != nil {
			return err
		}
	}
	body, err := inplace.StatefulSetRestorePatch(sts)
	return sendBuilt(ctx, c.Patch, sts.Name, body, err)
}
