package kubelet

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podStatus computes the status the kubelet would report for pod from its
// runtime state: container statuses, phase, IPs and the kubelet's
// conditions. Conditions the kubelet does not own (readiness gates, ...)
// are kept from pod.Status as they are.
func podStatus(pod *corev1.Pod, rt *podRuntime, hostIP string, now time.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	if rt.podIP != "" {
		st.PodIP, st.PodIPs = rt.podIP, []corev1.PodIP{{IP: rt.podIP}}
	}
	if st.StartTime == nil {
		t := apiTime(rt.startTime)
		st.StartTime = &t
	}
	finished := rt.terminal != "" || rt.stopped
	st.InitContainerStatuses = containerStatuses(pod, pod.Spec.InitContainers, true, rt, finished, now)
	st.ContainerStatuses = containerStatuses(pod, pod.Spec.Containers, false, rt, finished, now)
	st.Phase = rt.terminal
	if st.Phase == "" {
		st.Phase = podPhase(pod, st.InitContainerStatuses, st.ContainerStatuses, rt.stopped, rt.initialized)
	}
	st.ObservedGeneration = pod.Generation
	st.Conditions = kubeletConditions(pod, st, now)
	return st
}

func containerStatuses(pod *corev1.Pod, specs []corev1.Container, isInit bool, rt *podRuntime, finished bool, now time.Time) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for i := range specs {
		out = append(out, containerStatus(pod, &specs[i], kindOf(&specs[i], isInit), rt.ctrs[specs[i].Name], finished, now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func containerStatus(pod *corev1.Pod, spec *corev1.Container, k kind, c *ctr, finished bool, now time.Time) corev1.ContainerStatus {
	st := corev1.ContainerStatus{Name: spec.Name, Image: spec.Image, Started: ptr(false)}
	if c == nil || c.cur == nil {
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: defaultWaiting(pod)}
		if c != nil && c.wait.reason != "" {
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: c.wait.reason, Message: c.wait.message}
		}
		return st
	}
	st.Image, st.ImageID, st.ContainerID, st.RestartCount = c.cur.image, c.cur.imageID, c.cur.id, c.restarts
	switch {
	case c.running:
		st.State.Running = &corev1.ContainerStateRunning{StartedAt: apiTime(c.cur.startedAt)}
		st.LastTerminationState = terminated(c.prev)
		st.Started = ptr(true)
		st.Ready = k != initContainer && c.ready(now)
		st.Resources = resources(spec)
	case finished || !c.shouldRestart(pod.Spec.RestartPolicy):
		st.State = terminated(c.cur)
		st.LastTerminationState = terminated(c.prev)
		st.Ready = k == initContainer && c.cur.exitCode == 0
	default:
		w := c.wait
		if w.reason == "" {
			w.reason = "ContainerCreating"
		}
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
		st.LastTerminationState = terminated(c.cur)
	}
	return st
}

// defaultWaiting is the reason of a container never started yet.
func defaultWaiting(pod *corev1.Pod) string {
	if len(pod.Spec.InitContainers) > 0 {
		return "PodInitializing"
	}
	return "ContainerCreating"
}

func terminated(in *instance) corev1.ContainerState {
	if in == nil {
		return corev1.ContainerState{}
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode:    in.exitCode,
		Reason:      in.reason,
		StartedAt:   apiTime(in.startedAt),
		FinishedAt:  apiTime(in.finishedAt),
		ContainerID: in.id,
	}}
}

// resources reports a running container's resources as the kubelet does
// (needed for the resize subresource to accept a pod).
func resources(spec *corev1.Container) *corev1.ResourceRequirements {
	if len(spec.Resources.Requests) == 0 && len(spec.Resources.Limits) == 0 {
		return nil
	}
	return &corev1.ResourceRequirements{
		Requests: spec.Resources.Requests.DeepCopy(),
		Limits:   spec.Resources.Limits.DeepCopy(),
	}
}

func ptr[T any](v T) *T { return &v }

// apiTime is t as the API server stores it: whole seconds. Computing
// status at that precision lets an unchanged status compare equal.
func apiTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }
