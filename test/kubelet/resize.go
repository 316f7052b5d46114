package kubelet

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// resizeRestarts reports whether a running container started with had must
// be restarted for its spec's resources (an in-place resize through the
// pods/resize subresource): a resource whose value changed and whose
// resizePolicy says RestartContainer. Others are resized live (the status
// reports the spec's resources at the next write).
func resizeRestarts(c *corev1.Container, had corev1.ResourceRequirements) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy != corev1.RestartContainer {
			continue
		}
		if changed(c.Resources.Requests, had.Requests, p.ResourceName) || changed(c.Resources.Limits, had.Limits, p.ResourceName) {
			return true
		}
	}
	return false
}

func changed(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	x, okx := a[name]
	y, oky := b[name]
	return okx != oky || okx && x.Cmp(y) != 0
}

// allocate is the kubelet's allocation manager on pod: the first time, the
// spec's resources are admitted; a later change of a container's resources
// (a resize) is admitted when the pod then still fits the node's
// allocatable CPU and memory (the kubelet's canResizePod), and otherwise
// left pending as Infeasible with the kubelet's message, the container
// running on as it was. It returns pod with the admitted resources, as the
// kubelet's sync sees it (UpdatePodFromAllocation).
func (w *worker) allocate(pod *corev1.Pod, now time.Time) *corev1.Pod {
	if w.allocated == nil {
		w.allocated = map[string]corev1.ResourceRequirements{}
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			w.allocated[c.Name] = *c.Resources.DeepCopy()
		}
	}
	resized := false
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if had, ok := w.allocated[c.Name]; ok && !sameResources(had, c.Resources) {
			resized = true
		}
	}
	if !resized {
		w.resizePending = nil
		return pod
	}
	if msg := infeasible(pod, w.h.allocatable()); msg != "" {
		if w.resizePending == nil || w.resizePending.Message != msg {
			w.resizePending = &corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
				Reason: corev1.PodReasonInfeasible, Message: msg, LastTransitionTime: apiTime(now), ObservedGeneration: pod.Generation}
		}
		out := pod.DeepCopy()
		for i := range out.Spec.Containers {
			c := &out.Spec.Containers[i]
			if had, ok := w.allocated[c.Name]; ok {
				c.Resources = *had.DeepCopy()
			}
		}
		return out
	}
	w.resizePending = nil
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		w.allocated[c.Name] = *c.Resources.DeepCopy()
	}
	return pod
}

// infeasible is the kubelet's message when pod's requests exceed the
// node's allocatable CPU or memory ("" if they fit).
func infeasible(pod *corev1.Pod, alloc corev1.ResourceList) string {
	req := podRequests(pod)
	var parts []string
	if want, have := req.Cpu().MilliValue(), alloc.Cpu().MilliValue(); want > have {
		parts = append(parts, fmt.Sprintf("cpu, requested: %d, capacity: %d", want, have))
	}
	if want, have := req.Memory().Value(), alloc.Memory().Value(); want > have {
		parts = append(parts, fmt.Sprintf("memory, requested: %d, capacity: %d", want, have))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Node didn't have enough capacity: " + strings.Join(parts, ", ")
}

// resizeConditions puts the pending resize condition (if any) among the
// kubelet's conditions, keeping its transition time while it stays.
func (w *worker) resizeConditions(conds, old []corev1.PodCondition) []corev1.PodCondition {
	if w.resizePending == nil {
		return conds
	}
	c := *w.resizePending
	if prev := findCondition(old, c.Type); prev != nil && prev.Status == c.Status && prev.Reason == c.Reason {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	return append(conds, c)
}

func sameResources(a, b corev1.ResourceRequirements) bool {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if changed(a.Requests, b.Requests, name) || changed(a.Limits, b.Limits, name) {
			return false
		}
	}
	return true
}
