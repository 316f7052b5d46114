package inplace

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// specContainer is a container of a pod spec with its JSON-pointer path.
type specContainer struct {
	corev1.Container
	// Path is "/spec/containers/<i>" or "/spec/initContainers/<i>".
	Path    string
	Init    bool
	Sidecar bool
}

// findContainer finds a container or init container by name (names are
// unique across both lists).
func findContainer(spec *corev1.PodSpec, base, name string) (specContainer, bool) {
	for i, c := range spec.Containers {
		if c.Name == name {
			return specContainer{Container: c, Path: fmt.Sprintf("%s/containers/%d", base, i)}, true
		}
	}
	for i, c := range spec.InitContainers {
		if c.Name == name {
			return specContainer{Container: c, Path: fmt.Sprintf("%s/initContainers/%d", base, i),
				Init: true, Sidecar: isSidecar(c)}, true
		}
	}
	return specContainer{}, false
}

// isSidecar: a restartable init container keeps running, so an image change
// restarts it like a regular container.
func isSidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// ContainerStatus finds a container's status among regular and init
// container statuses; nil when the kubelet has not reported it.
func ContainerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// sameImage compares two references canonically: the same repository and
// tag, or the same digest. The runtime may report "docker.io/library/nginx:1.25"
// for a spec of "nginx:1.25"; a tagless name means ":latest".
func sameImage(a, b string) bool {
	ra, errA := imageref.Parse(a)
	rb, errB := imageref.Parse(b)
	if errA != nil || errB != nil {
		return a == b
	}
	if ra.Digest != "" && ra.Digest == rb.Digest {
		return true
	}
	return ra.Name() == rb.Name() && tagOrLatest(ra) == tagOrLatest(rb)
}

func tagOrLatest(r imageref.Ref) string {
	if r.Tag == "" && r.Digest == "" {
		return "latest"
	}
	return r.Tag
}
