package kube

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// byRunningImage indexes pods by "<node> <repository>@<digest>" of each
// container of theirs that is running (runningKey).
const byRunningImage = "running-image"

// runningIndex indexes a pod bound to a node under each image one of its
// containers runs, by the imageID of its status: a running container
// holds its image's layers on the node for as long as it runs. A
// container waiting or terminated proves nothing (the image may have been
// collected since), nor does a pod's spec, annotation or message.
func runningIndex(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil, nil
	}
	var keys []string
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.State.Running == nil {
				continue
			}
			if k := runningKey(pod.Spec.NodeName, strings.TrimPrefix(cs.ImageID, "docker-pullable://")); k != "" {
				keys = append(keys, k)
			}
		}
	}
	return keys, nil
}

// runningKey is the index key of image (a reference or an imageID such as
// "docker.io/library/nginx@sha256:…") on node: its canonical repository
// and digest; "" when it names no digest or no repository (a bare
// "sha256:…" image id says nothing of the repository the kubelet would
// resolve the planned reference in).
func runningKey(node, image string) string {
	r, err := imageref.Parse(image)
	if err != nil || r.Digest == "" || !strings.HasPrefix(r.Digest, "sha256:") {
		return ""
	}
	return node + " " + r.Name() + "@" + r.Digest
}

// RunsImage reports whether a pod bound to node has a container running
// image (a digest-pinned reference; false without a digest), by the pod
// statuses the informer holds from the API server. The process's own
// writes laid over the reads (Cached.Wrote) are not consulted.
func (c *Cache) RunsImage(node, image string) bool {
	k := runningKey(node, image)
	if k == "" || node == "" {
		return false
	}
	objs, err := c.pods.GetIndexer().ByIndex(byRunningImage, k)
	return err == nil && len(objs) > 0
}
