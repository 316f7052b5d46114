package templatesync

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// daemonSet keeps the RollingUpdate strategy throughout (OnDelete made
// `kubectl rollout status` fail): every pod is labelled with the template
// generation the template patch will make, so the controller counts it as
// updated before and after; then each pod gets the newest
// ControllerRevision's hash, and the record is removed. It serves an
// upgrade (images) and a resize (resources) alike (resize.go says what
// differs).
func (s *Syncer) daemonSet(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
	c := s.Client.AppsV1().DaemonSets(r.Workload.Namespace)
	ds, err := c.Get(ctx, r.Workload.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return notSynced(p, ReasonWorkloadDeleted, "the DaemonSet was deleted")
	}
	if err != nil {
		return err
	}
	switch p.Step {
	case StepStart:
		if done, err := s.beginSync(ctx, r, p, ds.ObjectMeta, ds.Spec.Template.Spec, ds.Spec.Selector); done || err != nil {
			return err
		}
		if err := s.daemonSetTemplate(ctx, r, p, ds); err != nil {
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
		if err := sendBuilt(ctx, c.Patch, ds.Name, body, err); err != nil {
			return err
		}
		p.Step = StepRestored
	case StepRestored:
		st := ds.Status
		if st.ObservedGeneration < ds.Generation || st.UpdatedNumberScheduled != st.DesiredNumberScheduled {
			return waiting("DaemonSet %s: updated %d/%d", ds.Name, st.UpdatedNumberScheduled, st.DesiredNumberScheduled)
		}
		return end(ctx, s, r, p, ds.ObjectMeta, c.Patch)
	}
	return nil
}

// daemonSetTemplate labels the pods with the next template generation,
// then sets the template (which must raise the generation to exactly that).
// A failed template patch takes the labels back at once, so no pod passes
// for updated under a template it does not run.
func (s *Syncer) daemonSetTemplate(ctx context.Context, r *rollout.Rollout, p *rollout.Sync, ds *appsv1.DaemonSet) error {
	body, err := daemonSetSyncPatch(ds, r, p)
	if errors.Is(err, inplace.ErrBusy) {
		// A sync of another upgrade was never finished: finish its restore first.
		body, err = inplace.DaemonSetRestorePatch(ds)
		if err := sendBuilt(ctx, s.Client.AppsV1().DaemonSets(ds.Namespace).Patch, ds.Name, body, err); err != nil {
			return err
		}
		return waiting("restored an unfinished template sync on %s", ds.Name)
	}
	if err != nil {
		return err
	}
	gen, err := inplace.DaemonSetTemplateGeneration(ds)
	if err != nil {
		return err
	}
	pods, err := s.podsOf(ctx, ds.Namespace, ds.Spec.Selector)
	if err != nil {
		return err
	}
	next := strconv.FormatInt(gen+1, 10)
	if templateShows(r, p, ds.Spec.Template.Spec) {
		next = strconv.FormatInt(gen, 10) // the template patch was made before a crash
	}
	if err := s.setLabel(ctx, pods, inplace.GenerationLabel, next); err != nil {
		return err
	}
	if err := sendBuilt(ctx, s.Client.AppsV1().DaemonSets(ds.Namespace).Patch, ds.Name, body, nil); err != nil {
		if back := s.labelsBack(ctx, ds.Namespace, pods, next); back != nil {
			return fmt.Errorf("%w; and taking the %s labels back: %v", err, inplace.GenerationLabel, back)
		}
		return err
	}
	return nil
}

// labelsBack puts back the generation label of the pods (as read before
// setLabel) that now carry next.
func (s *Syncer) labelsBack(ctx context.Context, ns string, before []corev1.Pod, next string) error {
	for i := range before {
		old := before[i].Labels[inplace.GenerationLabel]
		if old == next {
			continue
		}
		pod, err := s.Client.CoreV1().Pods(ns).Get(ctx, before[i].Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && (pod.UID != before[i].UID || pod.Labels[inplace.GenerationLabel] != next)) {
			continue
		}
		if err != nil {
			return err
		}
		if err := s.setLabel(ctx, []corev1.Pod{*pod}, inplace.GenerationLabel, old); err != nil {
			return err
		}
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
