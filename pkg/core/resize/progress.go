package resize

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// State is how far a resize of one container got.
type State int

const (
	// Waiting: the kubelet has not applied it yet (no condition, Deferred,
	// or in progress); the caller waits, within its deadline.
	Waiting State = iota
	// Done: the status reports the asked resources, no resize is pending
	// or in progress, and the container restarted exactly as its
	// resizePolicy says.
	Done
	// Failed: the node cannot (Infeasible), the kubelet reported an Error,
	// someone else changed the resources, or the container restarted when
	// it should not have; the caller rolls back.
	Failed
)

// Progress is a judgement with its reason and message, in the kubelet's
// words where it gave some.
type Progress struct {
	State           State
	Reason, Message string
}

// Judge reads pod for the resize of container name from from to to; the
// container had restartCount restarts before the patch.
func Judge(pod *corev1.Pod, name string, from, to corev1.ResourceRequirements, restartCount int32) Progress {
	i := index(pod, name)
	if i < 0 {
		return Progress{Failed, "ContainerGone", fmt.Sprintf("container %s is no longer in the pod", name)}
	}
	c := &pod.Spec.Containers[i]
	if !Equal(&c.Resources, &to) {
		return Progress{Failed, "ResourcesChanged", fmt.Sprintf("container %s asks %s, not the planned %s (changed by someone else)",
			name, String(c.Resources), String(to))}
	}
	if p := conditions(pod); p != nil {
		return *p
	}
	cs := status(pod, name)
	if cs == nil || cs.Resources == nil || !Equal(cs.Resources, &to) {
		return Progress{Waiting, "NotApplied", fmt.Sprintf("container %s does not run with %s yet", name, String(to))}
	}
	want := restartCount
	if Restarts(c, from, to) {
		want++
	}
	switch {
	case cs.RestartCount < want:
		return Progress{Waiting, "NotRestarted", fmt.Sprintf("container %s is to restart (resizePolicy RestartContainer)", name)}
	case cs.RestartCount > want:
		return Progress{Failed, "ContainerRestarted", fmt.Sprintf("container %s restarted %d times during its resize (expected %d)",
			name, cs.RestartCount-restartCount, want-restartCount)}
	}
	return Progress{Done, "Resized", fmt.Sprintf("container %s runs with %s", name, String(to))}
}

// conditions judges the pod's resize conditions: Infeasible or Error fail,
// Deferred or in progress wait.
func conditions(pod *corev1.Pod) *Progress {
	for _, cond := range pod.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case corev1.PodResizePending:
			if cond.Reason == corev1.PodReasonInfeasible {
				return &Progress{Failed, corev1.PodReasonInfeasible, cond.Message}
			}
			return &Progress{Waiting, cond.Reason, cond.Message}
		case corev1.PodResizeInProgress:
			if cond.Reason == corev1.PodReasonError {
				return &Progress{Failed, "ResizeError", cond.Message}
			}
			return &Progress{Waiting, "InProgress", cond.Message}
		}
	}
	return nil
}

func status(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}
