package inplace

import (
	appsv1 "k8s.io/api/apps/v1"
)

// DeploymentSyncPatch sets the Deployment's template images and
// spec.paused=true in ONE request (a paused Deployment never creates a
// ReplicaSet; two plain writes race with the controller), recording the
// previous images and paused flag. Then patch the current ReplicaSet with
// ReplicaSetSyncPatch and restore with DeploymentRestorePatch: the
// controller finds the ReplicaSet equal to the template and replaces no pod.
func DeploymentSyncPatch(d *appsv1.Deployment, upgradeID string, images map[string]string) ([]byte, error) {
	paused := d.Spec.Paused
	ops, _, err := syncBase(d.ObjectMeta, SyncRecord{UpgradeID: upgradeID,
		PreviousImages: previousImages(d.Spec.Template.Spec, images), Paused: &paused})
	if err != nil {
		return nil, err
	}
	img, err := imageOps(&d.Spec.Template.Spec, images)
	if err != nil {
		return nil, err
	}
	return marshal(append(append(ops, img...), addOp("/spec/paused", true)))
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
// alone.
func ReplicaSetSyncPatch(rs *appsv1.ReplicaSet, images map[string]string) ([]byte, error) {
	img, err := imageOps(&rs.Spec.Template.Spec, images)
	if err != nil {
		return nil, err
	}
	return marshal(append([]op{testOp("/metadata/uid", string(rs.UID))}, img...))
}

// StatefulSetSyncPatch sets the template images together with
// rollingUpdate.partition = replicas, so the controller makes a new revision
// but deletes no pod. Then wait for status.updateRevision to change, patch
// each pod's image with Patch and its controller-revision-hash label with
// RevisionLabelPatch, and restore with StatefulSetRestorePatch. An OnDelete
// StatefulSet keeps its strategy.
func StatefulSetSyncPatch(sts *appsv1.StatefulSet, upgradeID string, images map[string]string) ([]byte, error) {
	rec := SyncRecord{UpgradeID: upgradeID, PreviousImages: previousImages(sts.Spec.Template.Spec, images)}
	frozen := sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	if frozen {
		rec.StatefulSetStrategy = sts.Spec.UpdateStrategy.DeepCopy()
	}
	ops, recorded, err := syncBase(sts.ObjectMeta, rec)
	if err != nil {
		return nil, err
	}
	if frozen && !recorded {
		ops = append(ops, addOp("/spec/updateStrategy", partitioned(sts)))
	}
	img, err := imageOps(&sts.Spec.Template.Spec, images)
	if err != nil {
		return nil, err
	}
	return marshal(append(ops, img...))
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

// DaemonSetSyncPatch sets the template images together with an OnDelete
// update strategy. Then find the newest ControllerRevision's hash, relabel
// each pod with RevisionLabelPatch (after patching its image) and restore
// with DaemonSetRestorePatch.
func DaemonSetSyncPatch(ds *appsv1.DaemonSet, upgradeID string, images map[string]string) ([]byte, error) {
	rec := SyncRecord{UpgradeID: upgradeID, PreviousImages: previousImages(ds.Spec.Template.Spec, images)}
	switchIt := ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType
	if switchIt {
		rec.DaemonSetStrategy = ds.Spec.UpdateStrategy.DeepCopy()
	}
	ops, recorded, err := syncBase(ds.ObjectMeta, rec)
	if err != nil {
		return nil, err
	}
	if switchIt && !recorded {
		ops = append(ops, addOp("/spec/updateStrategy", appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}))
	}
	img, err := imageOps(&ds.Spec.Template.Spec, images)
	if err != nil {
		return nil, err
	}
	return marshal(append(ops, img...))
}

// DaemonSetRestorePatch puts back the update strategy recorded by the sync.
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
