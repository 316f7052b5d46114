package planner

import (
	corev1 "k8s.io/api/core/v1"

	"fmt"
	"strings"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// ResizeCandidates says, for each live pod, what each named container's
// resources become, or why it cannot be resized.
func ResizeCandidates(kind string, pods []*corev1.Pod, names []string, ch resize.Change) []rollout.Candidate {
	out := make([]rollout.Candidate, 0, len(pods))
	for _, pod := range pods {
		c := PodCandidate(kind, pod)
		var skips []string
		for _, name := range names {
			cp, why := resizePlan(pod, name, ch)
			if why != "" {
				skips = append(skips, name+": "+why)
				continue
			}
			c.Containers = append(c.Containers, cp)
		}
		if len(c.Containers) == 0 {
			c.Why = strings.Join(skips, "; ")
		}
		out = append(out, c)
	}
	return out
}

// resizePlan is the plan of one container: its image stays, its resources
// go from what the spec asks now to ch applied.
func resizePlan(pod *corev1.Pod, name string, ch resize.Change) (events.ContainerPlan, string) {
	var c *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			c = &pod.Spec.Containers[i]
		}
	}
	if c == nil {
		return events.ContainerPlan{}, fmt.Sprintf("the pod has no container %q (init containers and sidecars are not resized)", name)
	}
	var cs *corev1.ContainerStatus
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			cs = &pod.Status.ContainerStatuses[i]
		}
	}
	if cs == nil || cs.State.Running == nil {
		return events.ContainerPlan{}, inplace.SkipNotRunning
	}
	from := c.Resources
	to := resize.Desired(from, ch)
	if resize.Equal(&from, &to) {
		return events.ContainerPlan{}, "already asks " + resize.String(to)
	}
	return events.ContainerPlan{Name: name, FromImage: c.Image, FromImageID: cs.ImageID, ToImage: c.Image,
		PullPolicy: string(c.ImagePullPolicy), Resources: &events.ResizeResources{From: *from.DeepCopy(), To: to}}, ""
}
