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
	return LabelPatch(pod, RevisionLabel, revision)
}

// GenerationLabel is the label DaemonSet pods carry with the template
// generation they were made from; the controller counts a pod as updated
// when it equals the DaemonSet's template generation (or its
// controller-revision-hash the newest revision's).
const GenerationLabel = "pod-template-generation"

// LabelPatch sets one label of a pod, pinned to its UID.
func LabelPatch(pod *corev1.Pod, key, value string) ([]byte, error) {
	ops := []op{testOp("/metadata/uid", string(pod.UID))}
	return marshal(append(ops, setKeyOps(pod.ResourceVersion, "/metadata/labels", pod.Labels, key, value)...))
}
