package kubelet

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// podActions is what one sync does to a pod, the kubelet's computePodActions
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go, v1.35, no probes) over
// the runtime as the last relist saw it.
type podActions struct {
	killPod       bool // stop every running container and the sandbox
	createSandbox bool
	kill          []killAction // containers to kill, in this order
	initToStart   []int        // init containers to start, in order
	toStart       []int        // regular containers to start, in order
}

type killAction struct {
	id      string
	message string
}

// computeActions decides what the sync does, from the pod's spec and the
// runtime as observed (never the live runtime: the kubelet acts on its
// pod cache).
func computeActions(pod *corev1.Pod, s snapshot) podActions {
	if !s.sandboxReady() {
		return sandboxActions(pod, s)
	}
	var a podActions
	if !computeInitActions(pod, s, &a) || a.killPod {
		return a
	}
	keep := 0
	for idx := range pod.Spec.Containers {
		c := &pod.Spec.Containers[idx]
		st := s.latest(c.Name)
		if st == nil || st.state != running {
			if shouldRestart(c, pod, s) {
				a.toStart = append(a.toStart, idx)
			}
			continue
		}
		if st.image != c.Image {
			a.kill = append(a.kill, killAction{st.id, fmt.Sprintf("Container %s definition changed, will be restarted", c.Name)})
			a.toStart = append(a.toStart, idx)
			continue
		}
		if resizeRestarts(c, st.resources) {
			a.kill = append(a.kill, killAction{st.id, fmt.Sprintf("Container %s resize requires restart", c.Name)})
			a.toStart = append(a.toStart, idx)
			continue
		}
		keep++
	}
	if keep == 0 && len(a.toStart) == 0 {
		a.killPod, a.initToStart = true, nil
	}
	return a
}

// sandboxActions: without a ready sandbox everything starts over (a new
// sandbox, then the first init container or the regular containers),
// unless the pod is done.
func sandboxActions(pod *corev1.Pod, s snapshot) podActions {
	a := podActions{killPod: true, createSandbox: true}
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever && s.sandbox != nil && len(s.ctrs) > 0 {
		a.createSandbox = false
		return a
	}
	var start []int
	for idx := range pod.Spec.Containers {
		c := &pod.Spec.Containers[idx]
		if st := s.latest(c.Name); pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure &&
			st != nil && st.state == exited && st.exitCode == 0 {
			continue
		}
		start = append(start, idx)
	}
	if len(start) == 0 && anyRegularSeen(pod, s) {
		a.createSandbox = false
		return a
	}
	if len(pod.Spec.InitContainers) > 0 {
		a.initToStart = []int{0}
		return a
	}
	a.toStart = start
	return a
}

// computeInitActions is the kubelet's computeInitContainerActions: it
// finds the next init container to start (the latest one observed decides,
// walking backwards), keeps sidecars running (restarting a changed one),
// and reports whether the pod is initialized.
func computeInitActions(pod *corev1.Pod, s snapshot, a *podActions) bool {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return true
	}
	initialized := anyRegularCreated(pod, s)
	previously := initialized
	for i := len(inits) - 1; i >= 0; i-- {
		c := &inits[i]
		isSidecar := kindOf(c, true) == sidecar
		st := s.latest(c.Name)
		if st == nil {
			if previously && isSidecar {
				a.initToStart = append(a.initToStart, i)
			}
			continue
		}
		if previously && !isSidecar {
			continue
		}
		switch st.state {
		case created:
			a.initToStart = append(a.initToStart, i)
		case running:
			if !isSidecar {
				break
			}
			if i == len(inits)-1 {
				initialized = true
			} else if !previously {
				a.initToStart = append(a.initToStart, i+1)
			}
			if st.image != c.Image {
				a.kill = append(a.kill, killAction{st.id, fmt.Sprintf("Init container %s definition changed", c.Name)})
				a.initToStart = append(a.initToStart, i)
			}
		case exited:
			switch {
			case isSidecar:
				a.initToStart = append(a.initToStart, i)
			case st.exitCode != 0 && !shouldRestart(c, pod, s):
				a.killPod, a.initToStart = true, nil
				return false
			case st.exitCode != 0:
				a.initToStart = append(a.initToStart, i)
			case i == len(inits)-1:
				initialized = true
			default:
				a.initToStart = append(a.initToStart, i+1)
			}
		}
		previously = true
	}
	if !previously {
		a.initToStart = append(a.initToStart, 0)
	}
	slices.Reverse(a.initToStart)
	return initialized
}

// shouldRestart is the kubelet's ShouldContainerBeRestarted: a container
// never started, or not running, per the pod's restartPolicy and its exit
// code; sidecars always; never once the pod is being deleted.
func shouldRestart(c *corev1.Container, pod *corev1.Pod, s snapshot) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	st := s.latest(c.Name)
	switch {
	case st == nil, st.state == created:
		return true
	case st.state == running:
		return false
	case c.RestartPolicy != nil:
		return *c.RestartPolicy == corev1.ContainerRestartPolicyAlways ||
			*c.RestartPolicy == corev1.ContainerRestartPolicyOnFailure && st.exitCode != 0
	}
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return st.exitCode != 0
	}
	return true
}

// anyRegularCreated: some regular container was created or runs, so the
// pod was initialized once.
func anyRegularCreated(pod *corev1.Pod, s snapshot) bool {
	for _, c := range pod.Spec.Containers {
		if st := s.latest(c.Name); st != nil && (st.state == created || st.state == running) {
			return true
		}
	}
	return false
}

// anyRegularSeen: some regular container exists in the runtime.
func anyRegularSeen(pod *corev1.Pod, s snapshot) bool {
	for _, c := range pod.Spec.Containers {
		if s.latest(c.Name) != nil {
			return true
		}
	}
	return false
}
