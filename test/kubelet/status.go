package kubelet

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reason is what a sync's attempt to start a container ended with (the
// kubelet's reasonCache): the next status shows the container waiting
// with it, until a later sync starts the container.
type reason struct{ reason, message string }

// statusInput is what a sync generates a pod's status from.
type statusInput struct {
	pod      *corev1.Pod
	snap     snapshot          // the runtime as the last relist saw it
	reasons  map[string]reason // by container name
	old      corev1.PodStatus  // the status generated last (or the API's)
	hostIP   string
	terminal bool // the pod's containers were stopped for good
	now      time.Time
}

// generateStatus is the kubelet's generateAPIPodStatus (v1.35, no probes):
// container statuses from the two newest runtime instances of each
// container and the reason cache, the phase, the pod IP of a ready
// sandbox, and the kubelet's conditions. Conditions the kubelet does not
// own (readiness gates, ...) are kept from the pod as they are.
func generateStatus(in statusInput) corev1.PodStatus {
	pod := in.pod
	st := corev1.PodStatus{QOSClass: pod.Status.QOSClass, StartTime: in.old.StartTime}
	st.HostIP, st.HostIPs = in.hostIP, []corev1.HostIP{{IP: in.hostIP}}
	st.PodIP, st.PodIPs = in.old.PodIP, in.old.PodIPs
	if in.snap.sandboxReady() && in.snap.sandbox.ip != "" {
		st.PodIP, st.PodIPs = in.snap.sandbox.ip, []corev1.PodIP{{IP: in.snap.sandbox.ip}}
	}
	if st.StartTime == nil {
		t := apiTime(in.now)
		st.StartTime = &t
	}
	hasInit := len(pod.Spec.InitContainers) > 0
	st.InitContainerStatuses = containerStatuses(in, pod.Spec.InitContainers, in.old.InitContainerStatuses, true, hasInit)
	st.ContainerStatuses = containerStatuses(in, pod.Spec.Containers, in.old.ContainerStatuses, false, hasInit)
	st.Phase = podPhase(pod, st.InitContainerStatuses, st.ContainerStatuses, in.terminal, anyRegularSeen(pod, in.snap))
	if st.Phase != corev1.PodSucceeded && st.Phase != corev1.PodFailed {
		for _, p := range []corev1.PodPhase{in.old.Phase, pod.Status.Phase} {
			if p == corev1.PodSucceeded || p == corev1.PodFailed {
				st.Phase = p // a pod never leaves a terminal phase
			}
		}
	}
	st.ObservedGeneration = pod.Generation
	st.Conditions = kubeletConditions(pod, st, in.snap.sandboxReady(), in.old.Conditions, in.now)
	return st
}

// containerStatuses converts the runtime's instances of specs to API
// container statuses: the default waiting state for a container never
// created, the newest instance's state (the one before it as lastState),
// a waiting reason from the reason cache for a container to be restarted.
func containerStatuses(in statusInput, specs []corev1.Container, old []corev1.ContainerStatus, isInit, hasInit bool) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	defaultWaiting := "ContainerCreating"
	if hasInit {
		defaultWaiting = "PodInitializing"
	}
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for i := range specs {
		spec := &specs[i]
		st := corev1.ContainerStatus{Name: spec.Name, Image: spec.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: defaultWaiting}}}
		if o, ok := statusOf(old, spec.Name); ok {
			if o.State.Terminated != nil {
				st = *o.DeepCopy()
			} else {
				st.RestartCount, st.LastTerminationState = o.RestartCount, *o.LastTerminationState.DeepCopy()
			}
		}
		cur, prev := in.snap.lastTwo(spec.Name)
		if cur != nil {
			st = instanceStatus(spec, cur)
			if prev != nil {
				st.LastTerminationState = instanceState(prev)
			}
		}
		applyReason(in, spec, &st, isInit, cur)
		probe(spec, &st, kindOf(spec, isInit))
		out = append(out, st)
	}
	if !isInit {
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	}
	return out
}

// applyReason shows a container that is to be restarted as waiting with
// the reason the last attempt to start it gave, its last state kept.
func applyReason(in statusInput, spec *corev1.Container, st *corev1.ContainerStatus, isInit bool, cur *instance) {
	if isInit && cur != nil && cur.state == exited && cur.exitCode == 0 && kindOf(spec, true) == initContainer {
		return
	}
	r, ok := in.reasons[spec.Name]
	if !ok || !shouldRestart(spec, in.pod, in.snap) {
		return
	}
	if st.State.Terminated != nil {
		st.LastTerminationState = st.State
	}
	st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: r.reason, Message: r.message}}
}

// instanceStatus is the status of a runtime instance: its image, imageID,
// ID, restart count, state and, as for every container the runtime has,
// resources (the spec's, as allocated).
func instanceStatus(spec *corev1.Container, in *instance) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:               spec.Name,
		Image:              in.image,
		ImageID:            in.imageID,
		ContainerID:        in.id,
		RestartCount:       in.restarts,
		State:              instanceState(in),
		Resources:          spec.Resources.DeepCopy(),
		AllocatedResources: spec.Resources.Requests.DeepCopy(),
	}
}

func instanceState(in *instance) corev1.ContainerState {
	switch in.state {
	case running:
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: apiTime(in.started)}}
	case created:
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode:    in.exitCode,
		Reason:      in.reason,
		Message:     in.message,
		StartedAt:   apiTime(in.started),
		FinishedAt:  apiTime(in.finished),
		ContainerID: in.id,
	}}
}

// probe is the prober's part of a status without probes: a running
// container is started and ready; a plain init container is ready once it
// exited 0.
func probe(spec *corev1.Container, st *corev1.ContainerStatus, k kind) {
	started := st.State.Running != nil
	st.Started = ptr(started)
	switch {
	case k == initContainer:
		st.Ready = st.State.Terminated != nil && st.State.Terminated.ExitCode == 0
	default:
		st.Ready = started
	}
}

func ptr[T any](v T) *T { return &v }

// apiTime is t as the API server stores it: whole seconds. Computing
// status at that precision lets an unchanged status compare equal.
func apiTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }
