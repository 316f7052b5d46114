package kubelet

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// nodeLoad is what is already placed on a node.
type nodeLoad struct {
	pods     int
	requests corev1.ResourceList
}

// fits reports whether pod can go to node given its load, and if not, the
// scheduler's reason (as in "0/3 nodes are available: <reason>").
func fits(pod *corev1.Pod, node *corev1.Node, load nodeLoad) (bool, string) {
	if node.Spec.Unschedulable && !tolerates(pod, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}) {
		return false, "node(s) were unschedulable"
	}
	for _, t := range node.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerates(pod, t) {
			return false, fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
		}
	}
	if !matchesSelector(pod, node) {
		return false, "node(s) didn't match Pod's node affinity/selector"
	}
	if max := node.Status.Allocatable.Pods().Value(); int64(load.pods) >= max {
		return false, "Too many pods"
	}
	for name, want := range podRequests(pod) {
		have := node.Status.Allocatable[name]
		used := load.requests[name]
		used.Add(want)
		if used.Cmp(have) > 0 {
			return false, "Insufficient " + string(name)
		}
	}
	return true, ""
}

func tolerates(pod *corev1.Pod, taint corev1.Taint) bool {
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.Background(), &taint, false) {
			return true
		}
	}
	return false
}

// matchesSelector checks spec.nodeSelector and the required node affinity
// (terms ORed; within a term, matchExpressions on labels and matchFields
// on metadata.name ANDed), as the scheduler's NodeAffinity plugin does.
func matchesSelector(pod *corev1.Pod, node *corev1.Node) bool {
	for k, v := range pod.Spec.NodeSelector {
		if node.Labels[k] != v {
			return false
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(term, node) {
			return true
		}
	}
	return false
}

func termMatches(term corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, r := range term.MatchExpressions {
		v, has := node.Labels[r.Key]
		if !requirementMatches(r, v, has) {
			return false
		}
	}
	for _, r := range term.MatchFields {
		if r.Key != "metadata.name" || !requirementMatches(r, node.Name, true) {
			return false
		}
	}
	return true
}

func requirementMatches(r corev1.NodeSelectorRequirement, v string, has bool) bool {
	in := has && slices.Contains(r.Values, v)
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return in
	case corev1.NodeSelectorOpNotIn:
		return !in
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		return has && len(r.Values) == 1 && compareInts(v, r.Values[0], r.Operator)
	}
	return false
}

func compareInts(v, bound string, op corev1.NodeSelectorOperator) bool {
	a, err1 := strconv.ParseInt(v, 10, 64)
	b, err2 := strconv.ParseInt(bound, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if op == corev1.NodeSelectorOpGt {
		return a > b
	}
	return a < b
}

// podRequests is the pod's effective request: regular containers and
// sidecars summed, at least the largest plain init container, plus overhead.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	add := func(l corev1.ResourceList) {
		for k, v := range l {
			q := sum[k]
			q.Add(v)
			sum[k] = q
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c.Resources.Requests)
	}
	for _, c := range pod.Spec.InitContainers {
		if kindOf(&c, true) == sidecar {
			add(c.Resources.Requests)
		}
	}
	for _, c := range pod.Spec.InitContainers {
		for k, v := range c.Resources.Requests {
			if q := sum[k]; kindOf(&c, true) == initContainer && v.Cmp(q) > 0 {
				sum[k] = v.DeepCopy()
			}
		}
	}
	add(pod.Spec.Overhead)
	return sum
}

// addRequests adds a pod's requests to a load.
func (l *nodeLoad) add(pod *corev1.Pod) {
	l.pods++
	if l.requests == nil {
		l.requests = corev1.ResourceList{}
	}
	for k, v := range podRequests(pod) {
		q := l.requests[k]
		q.Add(v)
		l.requests[k] = q
	}
}

// unschedulableMessage aggregates per-node reasons the way the scheduler
// does: "0/3 nodes are available: 3 Too many pods."
func unschedulableMessage(total int, reasons []string) string {
	count := map[string]int{}
	for _, r := range reasons {
		count[r]++
	}
	parts := make([]string, 0, len(count))
	for r, n := range count {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", total, strings.Join(parts, ", "))
}
