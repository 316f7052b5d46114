package guard

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/restart"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// allowedRestart: the owner opts in and every planned switch is to another
// reference of the very bytes the container runs now (a restart never
// changes what runs). The policy has no say: nothing new is pulled.
func allowedRestart(owner kube.Workload, pod *corev1.Pod, cps []events.ContainerPlan) *Refusal {
	if r := optedIn(owner); r != nil {
		return r
	}
	for _, cp := range cps {
		image, running, ok := runs(pod, cp.Name)
		if !ok || image != cp.FromImage {
			continue // gone or changed by others: the patch reports either
		}
		if cp.ToDigest != running {
			return forged(ReasonNotThePlan, "container %s: the restart pins %s but the container runs %s", cp.Name, cp.ToDigest, running)
		}
		if err := restart.Same(cp.FromImage, cp.ToImage, running); err != nil {
			return forged(ReasonNotThePlan, "container %s: not a restart on the same bytes: %v", cp.Name, err)
		}
	}
	return nil
}
