package prepull

// Running is what pre-pull asks of the pod cache about a node's images.
type Running interface {
	// RunsImage reports whether a container of a pod bound to node runs
	// image (digest-pinned; false without a digest).
	RunsImage(node, image string) bool
}

// runningOn reports whether pods bound to node run every one of images
// (Deps.Running), each pinned to a digest: a container running a digest
// holds its layers on the node for as long as it runs.
func (f *Function) runningOn(node string, images []string) bool {
	if f.d.Running == nil || len(images) == 0 {
		return false
	}
	for _, img := range images {
		if !f.d.Running.RunsImage(node, img) {
			return false
		}
	}
	return true
}
