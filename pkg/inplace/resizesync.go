package inplace

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/resize"
	"github.com/inplace-dev/inplace/pkg/settle"
)

// DeploymentResizeSyncPatch is DeploymentSyncPatch for a resize: the
// template's container resources (not images) with spec.paused=true in one
// request, recording the paused flag. Then ReplicaSetResizeSyncPatch on
// the current ReplicaSet and DeploymentRestorePatch, as for images: the
// controller finds the ReplicaSet equal to the template (ignoring
// pod-template-hash) and replaces no pod.
func DeploymentResizeSyncPatch(d *appsv1.Deployment, upgradeID string, res map[string]corev1.ResourceRequirements, cause string) ([]byte, error) {
	paused := d.Spec.Paused
	ops, _, err := syncBase(d.ObjectMeta, SyncRecord{UpgradeID: upgradeID, PreviousImages: map[string]string{}, Paused: &paused}, cause)
	if err != nil {
		return nil, err
	}
	rops, err := resourceOps(&d.Spec.Template.Spec, res)
	if err != nil {
		return nil, err
	}
	return marshal(append(append(ops, rops...), addOp("/spec/paused", true)))
}

// ReplicaSetResizeSyncPatch sets the ReplicaSet's template resources as
// the Deployment's (same paths, same values), and its change-cause.
func ReplicaSetResizeSyncPatch(rs *appsv1.ReplicaSet, res map[string]corev1.ResourceRequirements, cause string) ([]byte, error) {
	rops, err := resourceOps(&rs.Spec.Template.Spec, res)
	if err != nil {
		return nil, err
	}
	ops := []op{testOp("/metadata/uid", string(rs.UID))}
	if cause != "" && rs.Annotations[ChangeCauseAnnotation] != cause {
		ops = append(ops, setKeyOps(rs.ResourceVersion, "/metadata/annotations", rs.Annotations, ChangeCauseAnnotation, cause)...)
	}
	return marshal(append(ops, rops...))
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
