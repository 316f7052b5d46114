package pulls

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// Labels of pre-pull pods.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelComponent = "app.kubernetes.io/component"
	ManagedBy      = "inplace"
	Component      = "prepull"
	// LabelImages is the key of the set of images a pre-pull pod pulls
	// (Key), so pods of one set on one node are found by label.
	LabelImages = "inplace.dev/prepull-images"
)

// Selector selects every pre-pull pod.
const Selector = LabelManagedBy + "=" + ManagedBy + "," + LabelComponent + "=" + Component

// IsPrepull tells a pre-pull pod by its labels.
func IsPrepull(p *corev1.Pod) bool {
	return p.Labels[LabelManagedBy] == ManagedBy && p.Labels[LabelComponent] == Component
}

// Targets are the distinct target images of containers, sorted, and
// whether one of them pulls Always.
func Targets(containers []events.ContainerPlan) (images []string, always bool) {
	for _, c := range containers {
		if !slices.Contains(images, c.ToImage) {
			images = append(images, c.ToImage)
		}
		always = always || c.PullPolicy == string(corev1.PullAlways)
	}
	slices.Sort(images)
	return images, always
}

// Key names a set of images in a label value (LabelImages).
func Key(images []string) string {
	h := sha256.New()
	for _, p := range images {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// Verdict is how a pre-pull pod's pull went.
type Verdict int

// Verdicts.
const (
	Pending Verdict = iota
	Pulled
	Failed
)

// pullFailures are waiting reasons after which the kubelet will not get
// the image by itself. ErrImagePull and RegistryUnavailable are left to
// turn into ImagePullBackOff (the kubelet's next sync), or to the timeout.
var pullFailures = map[string]bool{
	"ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"SignatureValidationFailed": true,
}

// Evaluate reads a pre-pull pod's status. An image is on the node once its
// container ran or was created from it (a command missing from the image
// still means the pull worked), and failed when the kubelet gave up on the
// pull. msg explains a failure or what it waits for.
func Evaluate(p *corev1.Pod) (v Verdict, msg string) {
	done, waits := 0, []string{}
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		switch w := cs.State.Waiting; {
		case cs.State.Running != nil, cs.State.Terminated != nil, cs.ImageID != "" && w == nil:
			done++
		case w != nil && pullFailures[w.Reason]:
			return Failed, fmt.Sprintf("%s: %s: %s", cs.Image, w.Reason, w.Message)
		case w != nil:
			waits = append(waits, fmt.Sprintf("%s: %s %s", cs.Image, w.Reason, w.Message))
		}
	}
	if n := len(p.Spec.Containers); done == n && n > 0 {
		return Pulled, ""
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return Failed, fmt.Sprintf("pre-pull pod %s: phase %s: %s %s", p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	if len(waits) == 0 {
		return Pending, fmt.Sprintf("pre-pull pod %s is %s", p.Name, p.Status.Phase)
	}
	return Pending, strings.Join(waits, "; ")
}

// OnNode reports whether the node's status.images lists every image: by
// digest when the reference has one, else by repository and tag (unless
// the container pulls Always: then only a digest is proof).
func OnNode(have []corev1.ContainerImage, images []string, always bool) bool {
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
