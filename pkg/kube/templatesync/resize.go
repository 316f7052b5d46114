package templatesync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// resizeSync brings a workload's template to the resources its pods were
// resized to, the same way as images: a Deployment paused with its
// template, its current ReplicaSet's template set alike, unpaused once the
// controller saw both (no new ReplicaSet, no pod replaced); a ReplicaSet
// in one patch; a StatefulSet and a DaemonSet by the steps of their image
// sync (statefulset.go, daemonset.go), which serve both.
func (s *Syncer) resizeSync(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
	switch r.Workload.Kind {
	case "Deployment":
		return s.deploymentResize(ctx, r, p)
	case "ReplicaSet":
		return s.replicaSetResize(ctx, r, p)
	case "StatefulSet":
		return s.statefulSet(ctx, r, p)
	case "DaemonSet":
		return s.daemonSet(ctx, r, p)
	}
	p.Step, p.Result, p.Note = StepDone, events.TemplateNone, "a "+r.Workload.Kind+" has no template"
	return nil
}

// What differs between an upgrade's sync and a resize's in the steps they
// share: what the template gets, and how the sync ends.

// beginSync starts the sync of r's kind: begin for an upgrade, resizeBegin
// for a resize.
func (s *Syncer) beginSync(ctx context.Context, r *rollout.Rollout, p *rollout.Sync, meta metav1.ObjectMeta,
	spec corev1.PodSpec, sel *metav1.LabelSelector) (bool, error) {
	if r.Resize != nil {
		return s.resizeBegin(ctx, r, p, meta, spec, sel)
	}
	return s.begin(ctx, r, p, meta, spec, sel)
}

// templateShows reports whether spec already has what the sync sets.
func templateShows(r *rollout.Rollout, p *rollout.Sync, spec corev1.PodSpec) bool {
	if r.Resize != nil {
		return inplace.TemplateShowsResources(spec, p.Resources)
	}
	return shows(spec, p.Images)
}

func statefulSetSyncPatch(sts *appsv1.StatefulSet, r *rollout.Rollout, p *rollout.Sync) ([]byte, error) {
	if r.Resize != nil {
		return inplace.StatefulSetResizeSyncPatch(sts, r.UpgradeID, p.Resources, resizeCause(r, p))
	}
	return inplace.StatefulSetSyncPatch(sts, r.UpgradeID, p.Images, cause(r, p.Images))
}

func daemonSetSyncPatch(ds *appsv1.DaemonSet, r *rollout.Rollout, p *rollout.Sync) ([]byte, error) {
	if r.Resize != nil {
		return inplace.DaemonSetResizeSyncPatch(ds, r.UpgradeID, p.Resources, resizeCause(r, p))
	}
	return inplace.DaemonSetSyncPatch(ds, r.UpgradeID, p.Images, cause(r, p.Images))
}

// end closes a sync: an upgrade's records the previous images (finish), a
// resize's says what the template now asks.
func end[T any](ctx context.Context, s *Syncer, r *rollout.Rollout, p *rollout.Sync, meta metav1.ObjectMeta, patch patchFunc[T]) error {
	if r.Resize != nil {
		s.resizeSynced(r, p)
		return nil
	}
	return finish(ctx, s, r, p, meta, patch)
}

func (s *Syncer) deploymentResize(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
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
		if err := s.deploymentResizeStart(ctx, r, p, d); err != nil || p.Step != StepFrozen {
			return err
		}
		fallthrough
	case StepFrozen:
		rsc := s.Client.AppsV1().ReplicaSets(d.Namespace)
		rs, err := rsc.Get(ctx, p.FromRevision, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get ReplicaSet %s: %w", p.FromRevision, err)
		}
		body, err := inplace.ReplicaSetResizeSyncPatch(rs, p.Resources, resizeCause(r, p))
		if err := sendBuilt(ctx, rsc.Patch, rs.Name, body, err); err != nil {
			return err
		}
		p.Step = StepReplicaSet
	case StepReplicaSet:
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
		s.resizeSynced(r, p)
	}
	return nil
}

func (s *Syncer) deploymentResizeStart(ctx context.Context, r *rollout.Rollout, p *rollout.Sync, d *appsv1.Deployment) error {
	active, err := s.activeReplicaSets(ctx, d)
	if err != nil {
		return err
	}
	if len(active) != 1 {
		return notSynced(p, ReasonRolloutUnderWay, "template left as is: the Deployment has %d active ReplicaSets (a rollout of its own is under way)", len(active))
	}
	p.FromRevision = active[0].Name
	if done, err := s.resizeBegin(ctx, r, p, d.ObjectMeta, d.Spec.Template.Spec, d.Spec.Selector); done || err != nil {
		return err
	}
	body, err := inplace.DeploymentResizeSyncPatch(d, r.UpgradeID, p.Resources, resizeCause(r, p))
	if errors.Is(err, inplace.ErrBusy) {
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

func (s *Syncer) replicaSetResize(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
	c := s.Client.AppsV1().ReplicaSets(r.Workload.Namespace)
	rs, err := c.Get(ctx, r.Workload.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return notSynced(p, ReasonWorkloadDeleted, "the ReplicaSet was deleted")
	}
	if err != nil {
		return err
	}
	if done, err := s.resizeBegin(ctx, r, p, rs.ObjectMeta, rs.Spec.Template.Spec, rs.Spec.Selector); done || err != nil {
		return err
	}
	body, err := inplace.ReplicaSetResizeSyncPatch(rs, p.Resources, resizeCause(r, p))
	if err := sendBuilt(ctx, c.Patch, rs.Name, body, err); err != nil {
		return err
	}
	s.resizeSynced(r, p)
	return nil
}

// resizeBegin: the resources to set (what every live pod now asks), and
// whether the template already shows them.
func (s *Syncer) resizeBegin(ctx context.Context, r *rollout.Rollout, p *rollout.Sync, meta metav1.ObjectMeta,
	spec corev1.PodSpec, sel *metav1.LabelSelector) (bool, error) {
	pods, err := s.podsOf(ctx, meta.Namespace, sel)
	if err != nil {
		return false, err
	}
	res, err := targetResources(r, pods)
	if err != nil {
		return false, notSynced(p, ReasonPodsNotOnTarget, "template left as is: %v", err)
	}
	p.Resources = res
	if inplace.TemplateShowsResources(spec, res) && meta.Annotations[inplace.SyncAnnotation] == "" {
		p.Step, p.Result, p.Note = StepDone, events.TemplateCurrent, "the template already asks these resources"
		return true, nil
	}
	return false, s.gitOps(r, p, meta)
}

// targetResources are the resources the rollout's pods were resized to;
// every live pod must ask them.
func targetResources(r *rollout.Rollout, pods []corev1.Pod) (map[string]corev1.ResourceRequirements, error) {
	want := map[string]corev1.ResourceRequirements{}
	for _, p := range r.Pods {
		if p.State != rollout.Succeeded {
			continue
		}
		for _, c := range p.Containers {
			if c.Resources != nil {
				want[c.Name] = c.Resources.To
			}
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no pod was resized")
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if !inplace.TemplateShowsResources(pod.Spec, want) {
			return nil, fmt.Errorf("pod %s does not ask %s", pod.Name, describeResources(want))
		}
	}
	return want, nil
}

func describeResources(res map[string]corev1.ResourceRequirements) string {
	parts := make([]string, 0, len(res))
	for _, name := range slices.Sorted(maps.Keys(res)) {
		parts = append(parts, "container "+name+": "+resize.String(res[name]))
	}
	return strings.Join(parts, "; ")
}

func resizeCause(r *rollout.Rollout, p *rollout.Sync) string {
	return fmt.Sprintf("inplace resize %s: %s in place, without a rollout", r.UpgradeID, describeResources(p.Resources))
}

// resizeSynced records the sync in an Event on the workload.
func (s *Syncer) resizeSynced(r *rollout.Rollout, p *rollout.Sync) {
	s.event(r, corev1.EventTypeNormal, EventSynced, fmt.Sprintf("Template resources set to what the pods were resized to in place (%s), without a rollout (resize %s)",
		describeResources(p.Resources), r.UpgradeID))
	p.Step, p.Result = StepDone, events.TemplateSynced
}
