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
// recorded before the hold is restored, once the controller's status
// counts every pod on a revision it knows (controllerCounted). In that
// order: released while the controller still saw a pod labelled ahead, it
// would replace that pod. Until then Release returns a settle.NotYet error.
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
	pods, err := s.podsOf(ctx, sts.Namespace, sts.Spec.Selector)
	if err != nil {
		return err
	}
	if back := sts.Status.CurrentRevision; back != "" && back != rec.Revision {
		var ahead []corev1.Pod
		for _, p := range pods {
			if p.Labels[inplace.RevisionLabel] == rec.Revision && p.DeletionTimestamp == nil {
				ahead = append(ahead, p)
			}
		}
		if len(ahead) > 0 {
			if err := s.relabel(ctx, ahead, back); err != nil {
				return err
			}
			return waiting("StatefulSet %s: %d pods labelled back with revision %s; the controller has yet to count them", sts.Name, len(ahead), back)
		}
	}
	if err := controllerCounted(sts, pods); err != nil {
		return err
	}
	body, err := inplace.StatefulSetRestorePatch(sts)
	return sendBuilt(ctx, c.Patch, sts.Name, body, err)
}

// controllerCounted: sts's status, as the StatefulSet controller last wrote
// it, counts at least as many pods on its current or update revision as
// pods (listed after any relabel) carry, and it observed sts's generation.
// The controller computes that status from its own pod cache, so a pod it
// still sees labelled ahead is missing from the count.
func controllerCounted(sts *appsv1.StatefulSet, pods []corev1.Pod) error {
	st := sts.Status
	want := int32(0)
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if rev := p.Labels[inplace.RevisionLabel]; rev != "" && (rev == st.CurrentRevision || rev == st.UpdateRevision) {
			want++
		}
	}
	counted := st.CurrentReplicas
	if st.UpdateRevision != st.CurrentRevision {
		counted += st.UpdatedReplicas
	}
	if st.ObservedGeneration < sts.Generation || counted < want {
		return waiting("StatefulSet %s: the controller counts %d pods on revisions %s/%s, %d carry them (observed %d/%d)",
			sts.Name, counted, st.CurrentRevision, st.UpdateRevision, want, st.ObservedGeneration, sts.Generation)
	}
	return nil
}
