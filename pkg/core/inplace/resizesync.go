package inplace

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// The resize sync patches are the image ones with the template's container
// resources in place of its images: the same guards, record, freeze and
// restore patch for each kind. A resize's record has no previous images.

// DeploymentResizeSyncPatch is DeploymentSyncPatch for a resize: the
// template's container resources (not images) with spec.paused=true in one
// request, recording the paused flag. Then ReplicaSetResizeSyncPatch on
// the current ReplicaSet and DeploymentRestorePatch, as for images: the
// controller finds the ReplicaSet equal to the template (ignoring
// pod-template-hash) and replaces no pod.
func DeploymentResizeSyncPatch(d *appsv1.Deployment, upgradeID string, res map[string]corev1.ResourceRequirements, cause string) ([]byte, error) {
	return deploymentSync(d, resizeRecord(upgradeID), cause, resourcesTo(res))
}

// ReplicaSetResizeSyncPatch sets the ReplicaSet's template resources as
// the Deployment's (same paths, same values), and its change-cause.
func ReplicaSetResizeSyncPatch(rs *appsv1.ReplicaSet, res map[string]corev1.ResourceRequirements, cause string) ([]byte, error) {
	return replicaSetSync(rs, cause, resourcesTo(res))
}

// StatefulSetResizeSyncPatch is StatefulSetSyncPatch for a resize: the
// template's container resources with rollingUpdate.partition = replicas
// (an OnDelete StatefulSet keeps its strategy), so the controller makes a
// new revision but deletes no pod. Then relabel the pods to the new
// revision (StatefulSetRevisionName, checked against status.updateRevision)
// and restore with StatefulSetRestorePatch.
func StatefulSetResizeSyncPatch(sts *appsv1.StatefulSet, upgradeID string, res map[string]corev1.ResourceRequirements, cause string) ([]byte, error) {
	return statefulSetSync(sts, resizeRecord(upgradeID), cause, resourcesTo(res))
}

// DaemonSetResizeSyncPatch is DaemonSetSyncPatch for a resize: the
// template's container resources, tested against the template generation
// the pods were labelled for (the next one), keeping the RollingUpdate
// strategy. Then relabel the pods to the newest ControllerRevision and
// remove the record with DaemonSetRestorePatch.
func DaemonSetResizeSyncPatch(ds *appsv1.DaemonSet, upgradeID string, res map[string]corev1.ResourceRequirements, cause string) ([]byte, error) {
	return daemonSetSync(ds, resizeRecord(upgradeID), cause, resourcesTo(res))
}

func resizeRecord(upgradeID string) SyncRecord {
	return SyncRecord{UpgradeID: upgradeID, PreviousImages: map[string]string{}}
}

// resourcesTo is the template change of a resize.
func resourcesTo(res map[string]corev1.ResourceRequirements) templateChange {
	return func(spec *corev1.PodSpec) ([]op, error) { return resourceOps(spec, res) }
}

// resourceOps tests every named container's template resources as they
// are and replaces those that differ from the wanted ones.
func resourceOps(spec *corev1.PodSpec, res map[string]corev1.ResourceRequirements) ([]op, error) {
	var ops []op
	for _, name := range slices.Sorted(maps.Keys(res)) {
		c, ok := findContainer(spec, "/spec/template/spec", name)
		if !ok || c.Init {
			return nil, settle.Permanentf("template has no container %q", name)
		}
		want := res[name]
		if resize.Equal(&c.Resources, &want) {
			continue
		}
		ops = append(ops, testOp(c.Path+"/resources", c.Resources), replaceOp(c.Path+"/resources", want))
	}
	return ops, nil
}

// TemplateShowsResources reports whether spec's containers ask res.
func TemplateShowsResources(spec corev1.PodSpec, res map[string]corev1.ResourceRequirements) bool {
	for name, want := range res {
		c, ok := findContainer(&spec, "", name)
		if !ok || !resize.Equal(&c.Resources, &want) {
			return false
		}
	}
	return true
}
