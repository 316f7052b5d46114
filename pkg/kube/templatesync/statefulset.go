package templatesync

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// statefulSet: partition = replicas with the template, and at once every
// pod relabelled to the revision the controller will make for it (so its
// status never counts fewer pods updated than before, or only until the
// relabels land); the controller's own update revision checked (and the
// pods relabelled again if it differs); the strategy restored. It serves an
// upgrade (images) and a resize (resources) alike (resize.go says what
// differs).
func (s *Syncer) statefulSet(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
	c := s.Client.AppsV1().StatefulSets(r.Workload.Namespace)
	sts, err := c.Get(ctx, r.Workload.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return notSynced(p, ReasonWorkloadDeleted, "the StatefulSet was deleted")
	}
	if err != nil {
		return err
	}
	switch p.Step {
	case StepStart:
		if done, err := s.beginSync(ctx, r, p, sts.ObjectMeta, sts.Spec.Template.Spec, sts.Spec.Selector); done || err != nil {
			return err
		}
		pods, err := s.podsOf(ctx, sts.Namespace, sts.Spec.Selector) // read first: the relabels follow the patch at once
		if err != nil {
			return err
		}
		body, err := statefulSetSyncPatch(sts, r, p)
		synced, err := sendBuiltResult(ctx, c.Patch, sts.Name, body, err)
		if err != nil {
			return err
		}
		if synced != nil {
			if err := s.relabelAhead(ctx, synced, pods, p); err != nil {
				return err
			}
		}
		p.Step = StepFrozen
	case StepFrozen:
		// Once the controller observed the generation that set the
		// template, its update revision is that template's.
		st := sts.Status
		if st.ObservedGeneration < sts.Generation || st.UpdateRevision == "" {
			return waiting("StatefulSet %s: waiting for the new revision (observed %d/%d)",
				sts.Name, st.ObservedGeneration, sts.Generation)
		}
		p.Revision, p.Step = st.UpdateRevision, StepRevision
	case StepRevision:
		pods, err := s.podsOf(ctx, sts.Namespace, sts.Spec.Selector)
		if err != nil {
			return err
		}
		if err := s.relabel(ctx, pods, p.Revision); err != nil {
			return err
		}
		p.Step = StepRelabeled
	case StepRelabeled:
		body, err := inplace.StatefulSetRestorePatch(sts)
		if err := sendBuilt(ctx, c.Patch, sts.Name, body, err); err != nil {
			return err
		}
		p.Step = StepRestored
	case StepRestored:
		if err := statefulSetSettled(sts, p); err != nil {
			return err
		}
		return end(ctx, s, r, p, sts.ObjectMeta, c.Patch)
	}
	return nil
}

// relabelAhead relabels the pods to the revision the controller will make
// for synced (the StatefulSet as the sync patch left it).
func (s *Syncer) relabelAhead(ctx context.Context, synced *appsv1.StatefulSet, pods []corev1.Pod, p *rollout.Sync) error {
	next, err := inplace.StatefulSetRevisionName(synced)
	if err != nil {
		return err
	}
	p.Revision = next
	return s.relabel(ctx, pods, next)
}

func statefulSetSettled(sts *appsv1.StatefulSet, p *rollout.Sync) error {
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	st := sts.Status
	if st.ObservedGeneration < sts.Generation || st.UpdatedReplicas != replicas {
		return waiting("StatefulSet %s: updated %d/%d (observed %d/%d)", sts.Name, st.UpdatedReplicas, replicas, st.ObservedGeneration, sts.Generation)
	}
	if sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType && st.CurrentRevision != p.Revision {
		return waiting("StatefulSet %s: current revision %s, not yet %s", sts.Name, st.CurrentRevision, p.Revision)
	}
	return nil
}
