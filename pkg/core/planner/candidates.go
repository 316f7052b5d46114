package planner

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Candidates says, for each live pod of a workload, what the push changes.
func Candidates(kind string, pods []*corev1.Pod, push events.UpgradeRequestData, pol policy.Policy) []rollout.Candidate {
	out := make([]rollout.Candidate, 0, len(pods))
	for _, pod := range pods {
		plans, skips := inplace.PlanPod(pod, push, pol)
		c := PodCandidate(kind, pod)
		c.Containers, c.ReadinessGate = plans, inplace.HasGate(pod)
		if len(plans) == 0 {
			c.Why = why(skips)
		}
		out = append(out, c)
	}
	return out
}

// PodCandidate is a live pod of a workload of kind as a candidate, before
// its plans: where it runs, whether it is Ready, its StatefulSet ordinal,
// the upgrade it shows done.
func PodCandidate(kind string, pod *corev1.Pod) rollout.Candidate {
	c := rollout.Candidate{
		Pod:   events.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Node: pod.Spec.NodeName},
		Ready: inplace.Ready(pod), Ordinal: -1, Done: inplace.Done(pod),
	}
	if kind == "StatefulSet" {
		c.Ordinal = ordinal(pod.Name)
	}
	return c
}

// why joins the skip reasons into one line.
func why(skips []inplace.Skip) string {
	if len(skips) == 0 {
		return "no container uses the pushed repository"
	}
	parts := make([]string, 0, len(skips))
	for _, s := range skips {
		parts = append(parts, s.Container+": "+s.Reason)
	}
	return strings.Join(parts, "; ")
}

// ordinal is the StatefulSet ordinal at the end of a pod name, or -1.
func ordinal(name string) int {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil {
		return -1
	}
	return n
}

// NeedsWork reports whether any candidate has something to change.
func NeedsWork(cands []rollout.Candidate) bool {
	for _, c := range cands {
		if len(c.Containers) > 0 {
			return true
		}
	}
	return false
}
