package resize

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// Patch is the RFC 6902 patch of the pods/resize subresource that sets
// container name's resources from from to to: it tests the pod's UID, the
// container's name at its index and its current resources (a concurrent
// change makes the API server reject it with 422), then replaces them.
// Verify rolls back with the same call, from and to swapped.
//
// It returns a permanent error when the pod is not the one planned, the
// container is gone, or its resources are neither from nor to (changed by
// someone else), and ok false when they already are to.
func Patch(pod *corev1.Pod, uid, name string, from, to corev1.ResourceRequirements) (patch []byte, ok bool, err error) {
	if string(pod.UID) != uid {
		return nil, false, settle.Permanentf("resize pod %s/%s: uid is %s, not the planned %s (the pod was replaced)", pod.Namespace, pod.Name, pod.UID, uid)
	}
	i := index(pod, name)
	if i < 0 {
		return nil, false, settle.Permanentf("resize pod %s/%s: container %q is gone", pod.Namespace, pod.Name, name)
	}
	cur := pod.Spec.Containers[i].Resources
	switch {
	case Equal(&cur, &to):
		return nil, false, nil
	case !Equal(&cur, &from):
		return nil, false, settle.Permanentf("resize pod %s/%s: container %q asks %s, neither the recorded %s nor %s (changed by someone else)",
			pod.Namespace, pod.Name, name, String(cur), String(from), String(to))
	}
	path := fmt.Sprintf("/spec/containers/%d", i)
	ops := []op{
		{Op: "test", Path: "/metadata/uid", Value: uid},
		{Op: "test", Path: path + "/name", Value: name},
		{Op: "test", Path: path + "/resources", Value: cur},
		{Op: "replace", Path: path + "/resources", Value: to},
	}
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, false, fmt.Errorf("encode resize patch: %w", err)
	}
	return b, true, nil
}

func index(pod *corev1.Pod, name string) int {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return i
		}
	}
	return -1
}

// String is "cpu 500m/1, memory 256Mi/-" (request/limit) for messages.
func String(r corev1.ResourceRequirements) string {
	q := func(l corev1.ResourceList, n corev1.ResourceName) string {
		if v, ok := l[n]; ok {
			return v.String()
		}
		return "-"
	}
	return fmt.Sprintf("cpu %s/%s, memory %s/%s", q(r.Requests, corev1.ResourceCPU), q(r.Limits, corev1.ResourceCPU),
		q(r.Requests, corev1.ResourceMemory), q(r.Limits, corev1.ResourceMemory))
}
