package inplace

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
)

// ChangeCauseAnnotation is kubectl's: `kubectl rollout history` shows it as
// CHANGE-CAUSE. The StatefulSet and DaemonSet controllers copy a workload's
// annotations into the ControllerRevision they create for a new template,
// and the Deployment controller into its ReplicaSet, so setting it together
// with the template records why that revision exists.
const ChangeCauseAnnotation = "kubernetes.io/change-cause"

// DeploymentSyncPatch sets the Deployment's template images and
// spec.paused=true in ONE request (a paused Deployment never creates a
// ReplicaSet; two plain writes race with the controller), recording the
// previous images and paused flag. Then patch the current ReplicaSet with
// ReplicaSetSyncPatch and restore with DeploymentRestorePatch: the
// controller finds the ReplicaSet equal to the template and replaces no pod.
func DeploymentSyncPatch(d *appsv1.Deployment, upgradeID string, images map[string]string, cause string) ([]byte, error) {
	return deploymentSync(d, syncRecord(upgradeID, d.Spec.Template.Spec, images), cause, imagesTo(images))
}

func deploymentSync(d *appsv1.Deployment, rec SyncRecord, cause string, change templateChange) ([]byte, error) {
	paused := d.Spec.Paused
	rec.Paused = &paused
	ops, _, err := syncBase(d.ObjectMeta, rec, cause)
	if err != nil {
		return nil, err
	}
	ch, err := change(&d.Spec.Template.Spec)
	if err != nil {
		return nil, err
	}
	return marshal(append(append(ops, ch...), addOp("/spec/paused", true)))
}

// DeploymentRestorePatch returns spec.paused to what it was before the sync
// and removes the record.
func DeploymentRestorePatch(d *appsv1.Deployment) ([]byte, error) {
	ops, rec, err := restoreBase(d.ObjectMeta)
	if err != nil {
		return nil, err
	}
	if rec.Paused == nil || !*rec.Paused {
		ops = append(ops, addOp("/spec/paused", false))
	}
	return marshal(ops)
}

// ReplicaSetSyncPatch sets the ReplicaSet's template images exactly as the
// Deployment's (same JSON paths, same strings), leaving pod-template-hash
// alone, and its change-cause (what `kubectl rollout history deployment`
// shows) when cause is set.
func ReplicaSetSyncPatch(rs *appsv1.ReplicaSet, images map[string]string, cause string) ([]byte, error) {
	return replicaSetSync(rs, cause, imagesTo(images))
}

func replicaSetSync(rs *appsv1.ReplicaSet, cause string, change templateChange) ([]byte, error) {
	ch, err := change(&rs.Spec.Template.Spec)
	if err != nil {
		return nil, err
	}
	ops := []op{testOp("/metadata/uid", string(rs.UID))}
	if cause != "" && rs.Annotations[ChangeCauseAnnotation] != cause {
		ops = append(ops, setKeyOps(rs.ResourceVersion, "/metadata/annotations", rs.Annotations, ChangeCauseAnnotation, cause)...)
	}
	return marshal(append(ops, ch...))
}

// StatefulSetSyncPatch sets the template images together with
// rollingUpdate.partition = replicas, so the controller makes a new revision
// but deletes no pod. Then wait for status.updateRevision to change, patch
// each pod's image with Patch and its controller-revision-hash label with
// RevisionLabelPatch, and restore with StatefulSetRestorePatch. An OnDelete
// StatefulSet keeps its strategy.
func StatefulSetSyncPatch(sts *appsv1.StatefulSet, upgradeID string, images map[string]string, cause string) ([]byte, error) {
	return statefulSetSync(sts, syncRecord(upgradeID, sts.Spec.Template.Spec, images), cause, imagesTo(images))
}

func statefulSetSync(sts *appsv1.StatefulSet, rec SyncRecord, cause string, change templateChange) ([]byte, error) {
	frozen := sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	if frozen {
		rec.StatefulSetStrategy = sts.Spec.UpdateStrategy.DeepCopy()
	}
	ops, recorded, err := syncBase(sts.ObjectMeta, rec, cause)
	if err != nil {
		return nil, err
	}
	if frozen && !recorded {
		ops = append(ops, addOp("/spec/updateStrategy", partitioned(sts)))
	}
	ch, err := change(&sts.Spec.Template.Spec)
	if err != nil {
		return nil, err
	}
	return marshal(append(ops, ch...))
}

// partitioned is the RollingUpdate strategy with partition = replicas,
// keeping maxUnavailable.
func partitioned(sts *appsv1.StatefulSet) appsv1.StatefulSetUpdateStrategy {
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	ru := appsv1.RollingUpdateStatefulSetStrategy{Partition: &replicas}
	if old := sts.Spec.UpdateStrategy.RollingUpdate; old != nil {
		ru.MaxUnavailable = old.MaxUnavailable
	}
	return appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &ru}
}

// StatefulSetRestorePatch puts back the update strategy recorded by the sync.
func StatefulSetRestorePatch(sts *appsv1.StatefulSet) ([]byte, error) {
	ops, rec, err := restoreBase(sts.ObjectMeta)
	if err != nil {
		return nil, err
	}
	if rec.StatefulSetStrategy != nil {
		ops = append(ops, addOp("/spec/updateStrategy", rec.StatefulSetStrategy))
	}
	return marshal(ops)
}

// DaemonSetSyncPatch sets the template images, keeping the RollingUpdate
// strategy (switching to OnDelete made `kubectl rollout status` fail). It
// must follow DaemonSetGenerationLabelPatch on every pod: the API server
// raises the template generation by one with the template, and the
// controller counts a pod whose pod-template-generation label equals it as
// updated, so it neither replaces a pod nor reports one fewer updated. The
// patch tests that the generation is still the one the pods were labelled
// for. Then relabel each pod's controller-revision-hash to the newest
// ControllerRevision (RevisionLabelPatch) and remove the record with
// DaemonSetRestorePatch.
func DaemonSetSyncPatch(ds *appsv1.DaemonSet, upgradeID string, images map[string]string, cause string) ([]byte, error) {
	return daemonSetSync(ds, syncRecord(upgradeID, ds.Spec.Template.Spec, images), cause, imagesTo(images))
}

func daemonSetSync(ds *appsv1.DaemonSet, rec SyncRecord, cause string, change templateChange) ([]byte, error) {
	gen, err := DaemonSetTemplateGeneration(ds)
	if err != nil {
		return nil, err
	}
	rec.TemplateGeneration = &gen
	ops, _, err := syncBase(ds.ObjectMeta, rec, cause)
	if err != nil {
		return nil, err
	}
	ch, err := change(&ds.Spec.Template.Spec)
	if err != nil {
		return nil, err
	}
	if replaces(ch) {
		// The template changes now: it must become generation gen+1, the
		// one the pods were labelled with.
		ops = append(ops, testOp("/metadata/annotations/"+escape(appsv1.DeprecatedTemplateGeneration), strconv.FormatInt(gen, 10)))
	}
	return marshal(append(ops, ch...))
}

// DaemonSetTemplateGeneration is the DaemonSet's template generation, which
// the API server raises with every template change (the annotation
// deprecated.daemonset.template.generation).
func DaemonSetTemplateGeneration(ds *appsv1.DaemonSet) (int64, error) {
	raw, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return 0, fmt.Errorf("DaemonSet %s/%s has no %s annotation", ds.Namespace, ds.Name, appsv1.DeprecatedTemplateGeneration)
	}
	gen, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("DaemonSet %s/%s: %s %q: %w", ds.Namespace, ds.Name, appsv1.DeprecatedTemplateGeneration, raw, err)
	}
	return gen, nil
}

// DaemonSetRestorePatch removes the record; an update strategy recorded by
// a sync of an older inplace (which switched to OnDelete) is put back.
func DaemonSetRestorePatch(ds *appsv1.DaemonSet) ([]byte, error) {
	ops, rec, err := restoreBase(ds.ObjectMeta)
	if err != nil {
		return nil, err
	}
	if rec.DaemonSetStrategy != nil {
		ops = append(ops, addOp("/spec/updateStrategy", rec.DaemonSetStrategy))
	}
	return marshal(ops)
}
