package prepull

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/pulls"
)

// verdict is how a pre-pull pod's pull went (pulls.Evaluate).
type verdict = pulls.Verdict

const (
	pending = pulls.Pending
	pulled  = pulls.Pulled
	failed  = pulls.Failed
)

func evaluate(p *corev1.Pod) (verdict, string) { return pulls.Evaluate(p) }

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

// onNode reports whether the node's status.images lists every image
// (pulls.OnNode).
func onNode(have []corev1.ContainerImage, images []string, always bool) bool {
	return pulls.OnNode(have, images, always)
}
