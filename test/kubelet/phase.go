package kubelet

import corev1 "k8s.io/api/core/v1"

// podPhase is the kubelet's getPhase (pkg/kubelet/kubelet_pods.go, v1.35,
// ContainerRestartRules off) over the container statuses.
func podPhase(pod *corev1.Pod, initStatuses, statuses []corev1.ContainerStatus, terminal, initialized bool) corev1.PodPhase {
	pendingInit, failedInit := initCounts(pod, initStatuses)
	if failedInit > 0 && pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	n, pendingSidecars := regularCounts(pod, initStatuses, statuses)
	switch {
	case pendingInit > 0 || pendingSidecars > 0 && !initialized, n.waiting > 0:
		return corev1.PodPending
	case n.running > 0 && n.unknown == 0:
		return corev1.PodRunning
	case n.running == 0 && n.stopped > 0 && n.unknown == 0:
		return stoppedPhase(pod, n, terminal)
	}
	return corev1.PodPending
}

type counts struct{ unknown, running, waiting, stopped, succeeded int }

// initCounts counts plain init containers not yet done, and failed ones.
func initCounts(pod *corev1.Pod, statuses []corev1.ContainerStatus) (pending, failed int) {
	for i := range pod.Spec.InitContainers {
		if kindOf(&pod.Spec.InitContainers[i], true) == sidecar {
			continue
		}
		st, ok := statusOf(statuses, pod.Spec.InitContainers[i].Name)
		switch {
		case !ok, st.State.Running != nil:
			pending++
		case st.State.Terminated != nil:
			if st.State.Terminated.ExitCode != 0 {
				failed++
			}
		case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil:
			if st.LastTerminationState.Terminated.ExitCode != 0 {
				failed++
			}
		default:
			pending++
		}
	}
	return pending, failed
}

// regularCounts counts sidecars and regular containers by state, and the
// sidecars not started yet.
func regularCounts(pod *corev1.Pod, initStatuses, statuses []corev1.ContainerStatus) (counts, int) {
	var n counts
	pending := 0
	for i := range pod.Spec.InitContainers {
		if kindOf(&pod.Spec.InitContainers[i], true) != sidecar {
			continue
		}
		st, ok := statusOf(initStatuses, pod.Spec.InitContainers[i].Name)
		switch {
		case !ok:
			pending++
			n.unknown++
		case st.State.Running != nil:
			if st.Started == nil || !*st.Started {
				pending++
			}
			n.running++
		case st.State.Waiting != nil && st.LastTerminationState.Terminated == nil:
			pending++
			n.waiting++
		}
	}
	for _, c := range pod.Spec.Containers {
		st, ok := statusOf(statuses, c.Name)
		switch {
		case !ok:
			n.unknown++
		case st.State.Running != nil:
			n.running++
		case st.State.Terminated != nil:
			n.stopped++
			if st.State.Terminated.ExitCode == 0 {
				n.succeeded++
			}
		case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil:
			n.stopped++
		case st.State.Waiting != nil:
			n.waiting++
		default:
			n.unknown++
		}
	}
	return n, pending
}

func stoppedPhase(pod *corev1.Pod, n counts, terminal bool) corev1.PodPhase {
	switch {
	case terminal && n.stopped == n.succeeded:
		return corev1.PodSucceeded
	case terminal:
		return corev1.PodFailed
	case pod.Spec.RestartPolicy == corev1.RestartPolicyAlways:
		return corev1.PodRunning
	case n.stopped == n.succeeded:
		return corev1.PodSucceeded
	case pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
		return corev1.PodFailed
	}
	return corev1.PodRunning
}

func statusOf(statuses []corev1.ContainerStatus, name string) (corev1.ContainerStatus, bool) {
	for _, s := range statuses {
		if s.Name == name {
			return s, true
		}
	}
	return corev1.ContainerStatus{}, false
}
