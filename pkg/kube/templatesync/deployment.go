package templatesync

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// deployment: pause+template in one patch and, at once, the ReplicaSet's
// template (the controller counts no pod as updated while the two differ:
// `kubectl rollout status` then says "0 out of N new replicas"); unpause
// once the controller has seen both; wait for it to settle.
func (s *Syncer) deployment(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
	c := s.Client.AppsV1().Deployments(r.Workload.Namespace)
	d, err := c.Get(ctx, r.Workload.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return notSynced(p, ReasonWorkloadDeleted, "the Deployment was deleted")
	}
	if err != nil {
		return err
	}
	switch p.Step {
	case StepStart:
		if err := s.deploymentStart(ctx, r, p, d); err != nil || p.Step != StepFrozen {
			return err
		}
		fallthrough
	case StepFrozen:
		if err := s.replicaSetTemplate(ctx, r, p, d.Namespace); err != nil {
			return err
		}
		p.Step = StepReplicaSet
	case StepReplicaSet:
		// Unpaused before the controller saw the ReplicaSet's new template,
		// it would make a new ReplicaSet from the Deployment's and replace
		// every pod: wait until its status counts the pods as updated.
		if err := s.deploymentSawReplicaSet(ctx, d, p); err != nil {
			return err
		}
		body, err := inplace.DeploymentRestorePatch(d)
		if err := sendBuilt(ctx, c.Patch, d.Name, body, err); err != nil {
			return err
		}
		p.Step = StepRestored
	case StepRestored:
		if err := s.deploymentSettled(ctx, d, p); err != nil {
			return err
		}
		return finish(ctx, s, r, p, d.ObjectMeta, c.Patch)
	}
	return nil
}

// replicaSetTemplate patches the current ReplicaSet's template like the
// Deployment's, with the same change-cause.
func (s *Syncer) replicaSetTemplate(ctx context.Context, r *rollout.Rollout, p *rollout.Sync, ns string) error {
	rsc := s.Client.AppsV1().ReplicaSets(ns)
	rs, err := rsc.Get(ctx, p.FromRevision, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get ReplicaSet %s: %w", p.FromRevision, err)
	}
	body, err := inplace.ReplicaSetSyncPatch(rs, p.Images, cause(r, p.Images))
	return sendBuilt(ctx, rsc.Patch, rs.Name, body, err)
}

// deploymentSawReplicaSet: the controller's status, computed after the
// sync's Deployment patch, counts the ReplicaSet's pods as updated, so its
// cache has the ReplicaSet's new template.
func (s *Syncer) deploymentSawReplicaSet(ctx context.Context, d *appsv1.Deployment, p *rollout.Sync) error {
	rs, err := s.Client.AppsV1().ReplicaSets(d.Namespace).Get(ctx, p.FromRevision, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get ReplicaSet %s: %w", p.FromRevision, err)
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != rs.Status.Replicas {
		return waiting("Deployment %s: the controller has not seen ReplicaSet %s's template yet (observed generation %d/%d, updated %d/%d)",
			d.Name, rs.Name, st.ObservedGeneration, d.Generation, st.UpdatedReplicas, rs.Status.Replicas)
	}
	return nil
}

func (s *Syncer) deploymentStart(ctx context.Context, r *rollout.Rollout, p *rollout.Sync, d *appsv1.Deployment) error {
	active, err := s.activeReplicaSets(ctx, d)
	if err != nil {
		return err
	}
	if len(active) != 1 {
		return notSynced(p, ReasonRolloutUnderWay, "template left as is: the Deployment has %d active ReplicaSets (a rollout of its own is under way); "+
			"resuming or finishing it replaces the upgraded pods with its template's images", len(active))
	}
	p.FromRevision = active[0].Name
	if done, err := s.begin(ctx, r, p, d.ObjectMeta, d.Spec.Template.Spec, d.Spec.Selector); done || err != nil {
		return err
	}
	body, err := inplace.DeploymentSyncPatch(d, r.UpgradeID, p.Images, cause(r, p.Images))
	if errors.Is(err, inplace.ErrBusy) {
		// A sync of another upgrade was never restored: restore it first.
		body, err = inplace.DeploymentRestorePatch(d)
		if err := sendBuilt(ctx, s.Client.AppsV1().Deployments(d.Namespace).Patch, d.Name, body, err); err != nil {
			return err
		}
		return waiting("restored an unfinished template sync on %s", d.Name)
	}
	if err := sendBuilt(ctx, s.Client.AppsV1().Deployments(d.Namespace).Patch, d.Name, body, err); err != nil {
		return err
	}
	p.Step = StepFrozen
	return nil
}

// activeReplicaSets are the Deployment's ReplicaSets with pods wanted.
func (s *Syncer) activeReplicaSets(ctx context.Context, d *appsv1.Deployment) ([]appsv1.ReplicaSet, error) {
	owned, err := s.ownedReplicaSets(ctx, d)
	if err != nil {
		return nil, err
	}
	var active []appsv1.ReplicaSet
	for _, rs := range owned {
		if rs.Spec.Replicas == nil || *rs.Spec.Replicas > 0 {
			active = append(active, rs)
		}
	}
	return active, nil
}

func (s *Syncer) ownedReplicaSets(ctx context.Context, d *appsv1.Deployment) ([]appsv1.ReplicaSet, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	list, err := s.Client.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list ReplicaSets: %w", err)
	}
	var owned []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID {
			owned = append(owned, rs)
		}
	}
	return owned, nil
}

// deploymentSettled waits for the controller to have seen the unpaused
// Deployment and to count every pod as updated, through the ReplicaSet we
// patched and no other.
func (s *Syncer) deploymentSettled(ctx context.Context, d *appsv1.Deployment, p *rollout.Sync) error {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != replicas || st.Replicas != replicas {
		return waiting("Deployment %s: observed generation %d/%d, updated %d/%d", d.Name, st.ObservedGeneration, d.Generation, st.UpdatedReplicas, replicas)
	}
	active, err := s.activeReplicaSets(ctx, d)
	if err != nil {
		return err
	}
	if len(active) != 1 || active[0].Name != p.FromRevision {
		p.Note = fmt.Sprintf("the controller has %d active ReplicaSets after the sync; expected only %s", len(active), p.FromRevision)
	}
	return nil
}
