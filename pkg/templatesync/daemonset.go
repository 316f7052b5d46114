package templatesync

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/inplace"
	"github.com/inplace-dev/inplace/pkg/rollout"
)

// daemonSet: OnDelete with the template, relabel the pods to the newest
// ControllerRevision's hash, restore the strategy.
func (s *Syncer) daemonSet(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
	c := s.Client.AppsV1().DaemonSets(r.Workload.Namespace)
	ds, err := c.Get(ctx, r.Workload.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return impossible(p, ReasonWorkloadDeleted, "the DaemonSet was deleted")
	}
	if err != nil {
		return err
	}
	switch p.Step {
	case StepStart:
		if done, err := s.begin(ctx, r, p, ds.ObjectMeta, ds.Spec.Template.Spec, ds.Spec.Selector); done || err != nil {
			return err
		}
		body, err := inplace.DaemonSetSyncPatch(ds, r.UpgradeID, p.Images)
		if err := apply(ctx, c.Patch, ds.Name, body, err); err != nil {
			return err
		}
		p.Step = StepFrozen
	case StepFrozen:
		// Once the controller observed the generation that set the
		// template, the newest ControllerRevision is that template's.
		if ds.Status.ObservedGeneration < ds.Generation {
			return waiting("DaemonSet %s: observed generation %d/%d", ds.Name, ds.Status.ObservedGeneration, ds.Generation)
		}
		hash, err := s.newestRevision(ctx, ds)
		if err != nil {
			return err
		}
		if hash == "" {
			return waiting("DaemonSet %s: no ControllerRevision yet", ds.Name)
		}
		p.Revision, p.Step = hash, StepRevision
	case StepRevision:
		pods, err := s.podsOf(ctx, ds.Namespace, ds.Spec.Selector)
		if err != nil {
			return err
		}
		if err := s.relabel(ctx, pods, p.Revision); err != nil {
			return err
		}
		p.Step = StepRelabeled
	case StepRelabeled:
		body, err := inplace.DaemonSetRestorePatch(ds)
		if err := apply(ctx, c.Patch, ds.Name, body, err); err != nil {
			return err
		}
		p.Step = StepRestored
	case StepRestored:
		st := ds.Status
		if st.ObservedGeneration < ds.Generation || st.UpdatedNumberScheduled != st.DesiredNumberScheduled {
			return waiting("DaemonSet %s: updated %d/%d", ds.Name, st.UpdatedNumberScheduled, st.DesiredNumberScheduled)
		}
		return finish(ctx, s, r, p, c.Patch)
	}
	return nil
}

// newestRevision is the controller-revision-hash of the DaemonSet's
// ControllerRevision with the highest revision ("" when none yet).
func (s *Syncer) newestRevision(ctx context.Context, ds *appsv1.DaemonSet) (string, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return "", err
	}
	list, err := s.Client.AppsV1().ControllerRevisions(ds.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", fmt.Errorf("list ControllerRevisions: %w", err)
	}
	var best *appsv1.ControllerRevision
	for i := range list.Items {
		cr := &list.Items[i]
		if ref := metav1.GetControllerOf(cr); ref == nil || ref.UID != ds.UID {
			continue
		}
		if best == nil || cr.Revision > best.Revision {
			best = cr
		}
	}
	if best == nil {
		return "", nil
	}
	return best.Labels[appsv1.DefaultDaemonSetUniqueLabelKey], nil
}
