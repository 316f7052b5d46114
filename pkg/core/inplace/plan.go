package inplace

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/policy"
)

// Skip is a container that uses the pushed repository but is left alone.
type Skip struct {
	Container string `json:"container"`
	Reason    string `json:"reason"`
}

// Skip reasons that are not policy decisions.
const (
	SkipInitContainer = "init container: an image change does not rerun it"
	SkipNoStatus      = "no container status yet: the kubelet has not started it"
	// SkipNotRunning: a restart or resize moves a running container only;
	// one starting (or its pod's change not yet in the cache) is waited for.
	SkipNotRunning = "not running"
	// SkipSameReference: a re-push of the running tag without a digest
	// would leave the spec unchanged, and the kubelet restarts a container
	// only when its spec image changes. Resolve the digest first.
	SkipSameReference = "the push carries no digest and the image reference would not change; resolve the tag's digest to move it"
)

// PlanPod decides, container by container, what a push changes in pod:
// every container and sidecar (restartable init container) whose image is in
// the pushed repository and that the policy allows. Containers of other
// repositories are not mentioned; plain init containers, containers already
// running (or already set to) the pushed digest and policy refusals are
// returned as skipped with the reason. When push.Containers is set, only
// those containers are considered.
//
// The target keeps the container's own spelling of registry and repository
// ("nginx" stays "nginx", not "docker.io/library/nginx") and takes the pushed
// tag, pinned to the pushed digest when known: "nginx:1.25.1@sha256:…".
func PlanPod(pod *corev1.Pod, push events.UpgradeRequestData, pol policy.Policy) ([]events.ContainerPlan, []Skip) {
	var plans []events.ContainerPlan
	var skips []Skip
	consider := func(c corev1.Container, init bool) {
		if !imageref.SameRepository(c.Image, push.Name()) {
			return
		}
		if len(push.Containers) > 0 && !slices.Contains(push.Containers, c.Name) {
			return
		}
		if init && !isSidecar(c) {
			skips = append(skips, Skip{c.Name, SkipInitContainer})
			return
		}
		p, reason := planContainer(pod, c, push.ImagePushedData, pol)
		if reason != "" {
			skips = append(skips, Skip{c.Name, reason})
			return
		}
		p.Sidecar = init
		plans = append(plans, p)
	}
	for _, c := range pod.Spec.InitContainers {
		consider(c, true)
	}
	for _, c := range pod.Spec.Containers {
		consider(c, false)
	}
	return plans, skips
}

// planContainer returns the plan of one candidate, or why it is skipped.
func planContainer(pod *corev1.Pod, c corev1.Container, push events.ImagePushedData, pol policy.Policy) (events.ContainerPlan, string) {
	cs := ContainerStatus(pod, c.Name)
	if cs == nil {
		return events.ContainerPlan{}, SkipNoStatus
	}
	spec, _ := imageref.Parse(c.Image) // SameRepository parsed it already
	running := imageref.DigestOf(cs.ImageID)
	if push.Digest != "" && spec.Digest == push.Digest && running != push.Digest {
		return events.ContainerPlan{}, "already set to " + push.Digest + ", waiting for the kubelet"
	}
	if running == "" {
		running = spec.Digest
	}
	d := policy.Decide(pol, policy.Current{Tag: tagOrLatest(spec), Digest: running},
		policy.Pushed{Tag: push.Tag, Digest: push.Digest})
	if !d.Upgrade {
		return events.ContainerPlan{}, d.Reason
	}
	to := targetImage(c.Image, push)
	if to == c.Image {
		return events.ContainerPlan{}, SkipSameReference
	}
	return events.ContainerPlan{
		Name:        c.Name,
		FromImage:   c.Image,
		FromImageID: cs.ImageID,
		ToImage:     to,
		ToDigest:    push.Digest,
		PullPolicy:  string(c.ImagePullPolicy),
	}, ""
}

// targetImage is image's name as written with the pushed tag and digest.
func targetImage(image string, push events.ImagePushedData) string {
	s := nameAsWritten(image)
	if push.Tag != "" {
		s += ":" + push.Tag
	}
	if push.Digest != "" {
		s += "@" + push.Digest
	}
	return s
}

// nameAsWritten strips the tag and digest from a reference, keeping the
// registry and repository exactly as the user wrote them.
func nameAsWritten(image string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(image), "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	return name
}
