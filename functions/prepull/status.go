package prepull

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/imageref"
)

// verdict is how a pre-pull pod's pull went.
type verdict int

const (
	pending verdict = iota
	pulled
	failed
)

// pullFailures are waiting reasons after which the kubelet will not get
// the image by itself. ErrImagePull and RegistryUnavailable are left to
// turn into ImagePullBackOff (the kubelet's next sync), or to the timeout.
var pullFailures = map[string]bool{
	"ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"SignatureValidationFailed": true,
}

// evaluate reads a pre-pull pod's status. An image is on the node once its
// container ran or was created from it (a command missing from the image
// still means the pull worked), and failed when the kubelet gave up on the
// pull. msg explains a failure or what it waits for.
func evaluate(p *corev1.Pod) (v verdict, msg string) {
	done, waits := 0, []string{}
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		switch w := cs.State.Waiting; {
		case cs.State.Running != nil, cs.State.Terminated != nil, cs.ImageID != "" && w == nil:
			done++
		case w != nil && pullFailures[w.Reason]:
			return failed, fmt.Sprintf("%s: %s: %s", cs.Image, w.Reason, w.Message)
		case w != nil:
			waits = append(waits, fmt.Sprintf("%s: %s %s", cs.Image, w.Reason, w.Message))
		}
	}
	if n := len(p.Spec.Containers); done == n && n > 0 {
		return pulled, ""
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return failed, fmt.Sprintf("pre-pull pod %s: phase %s: %s %s", p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	if len(waits) == 0 {
		return pending, fmt.Sprintf("pre-pull pod %s is %s", p.Name, p.Status.Phase)
	}
	return pending, strings.Join(waits, "; ")
}

// runsTargets reports whether every planned container of pod runs its
// target digest (from its status imageID); false when a target has none.
func runsTargets(pod *corev1.Pod, plan events.Plan) bool {
	for _, c := range plan.Containers {
		want := imageref.DigestOf(c.ToImage)
		if want == "" {
			return false
		}
		found := false
		for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
			for _, cs := range list {
				if cs.Name == c.Name && imageref.DigestOf(cs.ImageID) == want {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return len(plan.Containers) > 0
}

// onNode reports whether the node's status.images lists every image: by
// digest when the reference has one, else by repository and tag (unless
// the container pulls Always: then only a digest is proof).
func onNode(have []corev1.ContainerImage, images []string, always bool) bool {
	for _, img := range images {
		if !listed(have, img, always) {
			return false
		}
	}
	return true
}

func listed(have []corev1.ContainerImage, image string, always bool) bool {
	want, err := imageref.Parse(image)
	if err != nil {
		return false
	}
	tag := want.Tag
	if tag == "" {
		tag = "latest"
	}
	for _, ci := range have {
		for _, name := range ci.Names {
			r, err := imageref.Parse(name)
			if err != nil || r.Name() != want.Name() {
				continue
			}
			if want.Digest != "" && r.Digest == want.Digest {
				return true
			}
			if want.Digest == "" && !always && r.Digest == "" && r.Tag == tag {
				return true
			}
		}
	}
	return false
}
