package planner

import (
	"strings"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/restart"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	corev1 "k8s.io/api/core/v1"
)

// RestartCandidates says, for each live pod, how each named container is
// restarted (All), or why it cannot be.
func RestartCandidates(kind string, pods []*corev1.Pod, names []string) []rollout.Candidate {
	out := make([]rollout.Candidate, 0, len(pods))
	for _, pod := range pods {
		plans, skips := restart.Plan(pod, names)
		c := PodCandidate(kind, pod)
		c.Containers, c.All, c.ReadinessGate = plans, plans, inplace.HasGate(pod)
		if len(plans) == 0 {
			c.Why = strings.Join(skips, "; ")
		}
		out = append(out, c)
	}
	return out
}

// Skipped joins the Candidates' reasons.
func Skipped(cands []rollout.Candidate) string {
	if len(cands) == 0 {
		return "no pods"
	}
	parts := make([]string, 0, len(cands))
	for _, c := range cands {
		parts = append(parts, c.Pod.Name+": "+c.Why)
	}
	return strings.Join(parts, "; ")
}
