package kubelet

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// kubeletConditions returns the pod's conditions as the kubelet writes
// them (pkg/kubelet/status/generate.go and the status manager's merge):
// every condition it does not own (readiness gates, DisruptionTarget,
// ...) kept as the pod has it, then PodReadyToStartContainers (a ready
// sandbox), Initialized, Ready, ContainersReady and PodScheduled=True, in
// that order. A condition keeps its lastTransitionTime while its status
// stays.
func kubeletConditions(pod *corev1.Pod, st corev1.PodStatus, sandboxReady bool, old []corev1.PodCondition, now time.Time) []corev1.PodCondition {
	rtsc := corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}
	if sandboxReady {
		rtsc.Status = corev1.ConditionTrue
	}
	containersReady := containersReadyCondition(pod, st)
	own := []corev1.PodCondition{
		rtsc,
		initializedCondition(pod, st),
		readyCondition(pod, pod.Status.Conditions, containersReady),
		containersReady,
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	}
	out := make([]corev1.PodCondition, 0, len(pod.Status.Conditions)+len(own))
	for _, c := range pod.Status.Conditions {
		if !isKubeletCondition(c.Type) {
			out = append(out, c)
		}
	}
	for _, c := range own {
		c.ObservedGeneration = pod.Generation
		c.LastTransitionTime = apiTime(now)
		prev := findCondition(old, c.Type)
		if prev == nil {
			prev = findCondition(pod.Status.Conditions, c.Type)
		}
		if prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}

// isKubeletCondition: a condition type the kubelet owns and rewrites.
func isKubeletCondition(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady,
		corev1.PodScheduled, corev1.PodResizeInProgress, corev1.PodResizePending:
		return true
	}
	return false
}

func containersReadyCondition(pod *corev1.Pod, st corev1.PodStatus) corev1.PodCondition {
	cond := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse}
	switch st.Phase {
	case corev1.PodSucceeded:
		cond.Reason = "PodCompleted"
		return cond
	case corev1.PodFailed:
		cond.Reason = "PodFailed"
		return cond
	}
	var unready []string
	for i := range pod.Spec.InitContainers {
		if kindOf(&pod.Spec.InitContainers[i], true) != sidecar {
			continue
		}
		if s, ok := statusOf(st.InitContainerStatuses, pod.Spec.InitContainers[i].Name); !ok || !s.Ready {
			unready = append(unready, pod.Spec.InitContainers[i].Name)
		}
	}
	for _, c := range pod.Spec.Containers {
		if s, ok := statusOf(st.ContainerStatuses, c.Name); !ok || !s.Ready {
			unready = append(unready, c.Name)
		}
	}
	if len(unready) > 0 {
		cond.Reason = "ContainersNotReady"
		cond.Message = fmt.Sprintf("containers with unready status: %v", unready)
		return cond
	}
	cond.Status = corev1.ConditionTrue
	return cond
}

// readyCondition is ContainersReady and every readiness gate's condition
// present with status True.
func readyCondition(pod *corev1.Pod, conds []corev1.PodCondition, containersReady corev1.PodCondition) corev1.PodCondition {
	if containersReady.Status != corev1.ConditionTrue {
		return corev1.PodCondition{Type: corev1.PodReady, Status: containersReady.Status,
			Reason: containersReady.Reason, Message: containersReady.Message}
	}
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		c := findCondition(conds, g.ConditionType)
		switch {
		case c == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(g.ConditionType)))
		case c.Status != corev1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(g.ConditionType), c.Status))
		}
	}
	if len(msgs) > 0 {
		return corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse,
			Reason: "ReadinessGatesNotReady", Message: strings.Join(msgs, ", ")}
	}
	return corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
}

func initializedCondition(pod *corev1.Pod, st corev1.PodStatus) corev1.PodCondition {
	cond := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	if st.Phase == corev1.PodSucceeded {
		cond.Reason = "PodCompleted"
		return cond
	}
	if anyRegularStarted(st.ContainerStatuses) {
		return cond
	}
	var incomplete []string
	for i := range pod.Spec.InitContainers {
		spec := &pod.Spec.InitContainers[i]
		s, ok := statusOf(st.InitContainerStatuses, spec.Name)
		done := ok && s.Ready
		if kindOf(spec, true) == sidecar {
			done = ok && s.Started != nil && *s.Started
		}
		if !done {
			incomplete = append(incomplete, spec.Name)
		}
	}
	if len(incomplete) > 0 {
		cond.Status, cond.Reason = corev1.ConditionFalse, "ContainersNotInitialized"
		cond.Message = fmt.Sprintf("containers with incomplete status: %v", incomplete)
	}
	return cond
}

// anyRegularStarted is the kubelet's HasAnyRegularContainerStarted.
func anyRegularStarted(statuses []corev1.ContainerStatus) bool {
	for _, s := range statuses {
		if s.State.Running != nil || s.State.Terminated != nil {
			return true
		}
	}
	return false
}

func findCondition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
