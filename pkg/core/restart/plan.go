package restart

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// Plan is what restarting the named containers of pod changes: for each, the
// switch to the other reference of the bytes it runs. A container that
// cannot be restarted in place (absent, a plain init container, not
// running) is left out with the reason.
func Plan(pod *corev1.Pod, names []string) (plans []events.ContainerPlan, skips []string) {
	st, _ := inplace.ParseState(pod)
	for _, name := range names {
		cp, why := planOne(pod, st, name)
		if why != "" {
			skips = append(skips, name+": "+why)
			continue
		}
		plans = append(plans, cp)
	}
	return plans, skips
}

func planOne(pod *corev1.Pod, st *inplace.State, name string) (events.ContainerPlan, string) {
	c, sidecar, why := find(pod, name)
	if why != "" {
		return events.ContainerPlan{}, why
	}
	cs := status(pod, name, sidecar)
	if cs == nil || cs.State.Running == nil {
		return events.ContainerPlan{}, inplace.SkipNotRunning
	}
	running := imageref.DigestOf(cs.ImageID)
	previous := ""
	if st != nil {
		if prev := st.Container(name); prev != nil && prev.TargetImage == c.Image {
			previous = prev.PreviousImage
		}
	}
	to, err := Flip(c.Image, running, previous)
	if err != nil {
		return events.ContainerPlan{}, err.Error()
	}
	return events.ContainerPlan{Name: name, Sidecar: sidecar, FromImage: c.Image, FromImageID: cs.ImageID,
		ToImage: to, ToDigest: running, PullPolicy: string(c.ImagePullPolicy)}, ""
}

// find is the container named name: a regular one or a native sidecar.
func find(pod *corev1.Pod, name string) (*corev1.Container, bool, string) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i], false, ""
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.Name != name {
			continue
		}
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			return nil, false, "a plain init container is not rerun by the kubelet"
		}
		return c, true, ""
	}
	return nil, false, fmt.Sprintf("the pod has no container %q", name)
}

func status(pod *corev1.Pod, name string, sidecar bool) *corev1.ContainerStatus {
	list := pod.Status.ContainerStatuses
	if sidecar {
		list = pod.Status.InitContainerStatuses
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}
