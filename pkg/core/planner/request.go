package planner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// RequestCandidates says, for each live pod, what request x would change
// on each of its containers, or why it cannot: its kind's candidates.
func RequestCandidates(kind string, pods []*corev1.Pod, x rollout.Request) ([]rollout.Candidate, error) {
	switch x := x.(type) {
	case *rollout.Restart:
		return RestartCandidates(kind, pods, x.Containers), nil
	case *rollout.Resize:
		ch, err := resize.Parse(x.CPU, x.Memory)
		if err != nil {
			return nil, settle.Permanent(err)
		}
		return ResizeCandidates(kind, pods, x.Containers, ch), nil
	}
	return nil, settle.Permanent(fmt.Errorf("a request of kind %T has no candidates", x))
}
