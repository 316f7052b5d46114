package inplace

import (
	corev1 "k8s.io/api/core/v1"
)

// RevisionLabelPatch sets a StatefulSet or DaemonSet pod's
// controller-revision-hash label, so the controller counts the pod (already
// on the new image) as updated. For a StatefulSet the value is the full
// ControllerRevision name (status.updateRevision); for a DaemonSet it is the
// newest ControllerRevision's controller-revision-hash label. Never use it
// for pod-template-hash.
func RevisionLabelPatch(pod *corev1.Pod, revision string) ([]byte, error) {
	ops := []op{testOp("/metadata/uid", string(pod.UID))}
	return marshal(append(ops, setKeyOps(pod.ResourceVersion, "/metadata/labels", pod.Labels, RevisionLabel, revision)...))
}
