package pulls

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// ReasonPulled is the reason of the kubelet's Event at the end of a pull
// (and when the image was present already): it is recorded before the
// container is created, so it comes a container start and a PLEG relist
// before the pod's status shows the container.
const ReasonPulled = "Pulled"

// Reported reports whether the kubelet of p's node recorded, for every
// container of p, a Pulled Event of that container's image: p's images are
// on the node, whatever its status shows yet. An Event is a claim anyone
// allowed to write Events can make, so one counts only when it names p by
// UID, namespace, name and container, comes from the kubelet of p's node,
// and quotes the container's image; a forged one can at worst let the
// planned pod's own sync pull the image.
func Reported(p *corev1.Pod, evs []corev1.Event) bool {
	if p.Spec.NodeName == "" || len(p.Spec.Containers) == 0 {
		return false
	}
	for _, c := range p.Spec.Containers {
		if !anyEvent(evs, func(e *corev1.Event) bool { return reportsPull(p, &c, e) }) {
			return false
		}
	}
	return true
}

// reportsPull: e is the kubelet's Pulled Event of container c of p.
func reportsPull(p *corev1.Pod, c *corev1.Container, e *corev1.Event) bool {
	o := e.InvolvedObject
	return e.Reason == ReasonPulled && e.Type == corev1.EventTypeNormal &&
		o.Kind == "Pod" && o.UID == p.UID && o.Namespace == p.Namespace && o.Name == p.Name &&
		o.FieldPath == "spec.containers{"+c.Name+"}" &&
		e.Source.Component == "kubelet" && e.Source.Host == p.Spec.NodeName &&
		quotes(e.Message, c.Image)
}

// quotes: msg quotes image as written, or as the kubelet names an image
// without tag or digest (":latest" added).
func quotes(msg, image string) bool {
	if strings.Contains(msg, strconv.Quote(image)) {
		return true
	}
	r, err := imageref.Parse(image)
	return err == nil && r.Tag == "" && r.Digest == "" && strings.Contains(msg, strconv.Quote(image+":latest"))
}

func anyEvent(evs []corev1.Event, ok func(*corev1.Event) bool) bool {
	for i := range evs {
		if ok(&evs[i]) {
			return true
		}
	}
	return false
}
