package kubelet

import (
	corev1 "k8s.io/api/core/v1"
)

// resizeRestarts reports whether a running container started with had must
// be restarted for its spec's resources (an in-place resize through the
// pods/resize subresource): a resource whose value changed and whose
// resizePolicy says RestartContainer. Others are resized live (the status
// reports the spec's resources at the next write).
func resizeRestarts(c *corev1.Container, had corev1.ResourceRequirements) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy != corev1.RestartContainer {
			continue
		}
		if changed(c.Resources.Requests, had.Requests, p.ResourceName) || changed(c.Resources.Limits, had.Limits, p.ResourceName) {
			return true
		}
	}
	return false
}

func changed(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	x, okx := a[name]
	y, oky := b[name]
	return okx != oky || okx && x.Cmp(y) != 0
}
