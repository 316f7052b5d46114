package inplace

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
)

// Verdict is the outcome of a completion check.
type Verdict string

// Verdicts of Result.
const (
	InProgress Verdict = "InProgress"
	Succeeded  Verdict = "Succeeded"
	Failed     Verdict = "Failed"
)

// Reasons of Result besides the kubelet's own waiting reasons
// (ErrImagePull, ImagePullBackOff, CrashLoopBackOff, InvalidImageName,
// ErrImageNeverPull, CreateContainerConfigError, RunContainerError, ...),
// which are passed through.
const (
	ReasonUpdated         = "Updated"
	ReasonRolledBack      = "RolledBack"
	ReasonPodReplaced     = "PodReplaced"
	ReasonPodDeleted      = "PodDeleted"
	ReasonChangedByOthers = "ChangedByOthers"
	ReasonSuperseded      = "Superseded"
	ReasonNotPatched      = "NotPatched"
	ReasonNotObserved     = "NotObserved"
	ReasonNoStatus        = "NoStatus"
	ReasonRestarting      = "Restarting"
	ReasonNotReady        = "NotReady"
	ReasonUnexpectedImage = "UnexpectedImage"
	ReasonCrashLoop       = "CrashLoopBackOff"
)

// Result is what a completion check saw.
type Result struct {
	Verdict Verdict
	// Reason is CamelCase: the kubelet's waiting reason or one of the Reason
	// constants.
	Reason string
	// Message is for people; it carries the kubelet's message when there is one.
	Message string
	// Containers is what each checked container runs now.
	Containers []events.ContainerResult
}

func result(v Verdict, reason, format string, args ...any) Result {
	return Result{Verdict: v, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// failReasons are waiting reasons after which the kubelet will not get the
// container running by itself.
var failReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"ErrImageNeverPull": true, "RegistryUnavailable": true, "SignatureValidationFailed": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
	"PreStartHookError": true, "PostStartHookError": true, "CrashLoopBackOff": true,
}

// identity fails when the pod is gone, replaced or being deleted.
func identity(pod *corev1.Pod, uid string) (Result, bool) {
	switch {
	case pod == nil:
		return result(Failed, ReasonPodDeleted, "the pod is gone"), true
	case uid != "" && string(pod.UID) != uid:
		return result(Failed, ReasonPodReplaced, "pod %s/%s has uid %s, not %s: it was replaced", pod.Namespace, pod.Name, pod.UID, uid), true
	case pod.DeletionTimestamp != nil:
		return result(Failed, ReasonPodDeleted, "pod %s/%s is being deleted", pod.Namespace, pod.Name), true
	}
	return Result{}, false
}

// notObserved: on clusters that report it, status.observedGeneration below
// metadata.generation means the kubelet has not acted on the last spec yet.
func notObserved(pod *corev1.Pod) (Result, bool) {
	og := pod.Status.ObservedGeneration
	if og != 0 && og < pod.Generation {
		return result(InProgress, ReasonNotObserved, "the kubelet has observed generation %d of %d", og, pod.Generation), true
	}
	return Result{}, false
}

// waitingFailure is a container waiting for a reason it will not recover
// from by itself. CrashLoopBackOff counts only once the container moved
// (before that it may be the old container's backoff).
func waitingFailure(cs *corev1.ContainerStatus, moved bool) (Result, bool) {
	w := cs.State.Waiting
	if w == nil || !failReasons[w.Reason] || (w.Reason == ReasonCrashLoop && !moved) {
		return Result{}, false
	}
	return result(Failed, w.Reason, "container %s: %s: %s", cs.Name, w.Reason, w.Message), true
}

// crashLooped: restarted more than allowed times since base (once for the
// patch), so the new container already died at least once.
func crashLooped(cs *corev1.ContainerStatus, base, allowed int32) (Result, bool) {
	if cs.RestartCount <= base+allowed {
		return Result{}, false
	}
	msg := fmt.Sprintf("container %s restarted %d times since the patch", cs.Name, cs.RestartCount-base)
	if t := cs.LastTerminationState.Terminated; t != nil {
		msg += fmt.Sprintf("; last exit code %d (%s)", t.ExitCode, t.Reason)
		if t.Message != "" {
			msg += ": " + t.Message
		}
	}
	return Result{Verdict: Failed, Reason: ReasonCrashLoop, Message: msg}, true
}

// pending explains a container the kubelet is still working on.
func pending(cs *corev1.ContainerStatus, reason, format string, args ...any) Result {
	if w := cs.State.Waiting; w != nil && w.Reason != "" {
		r := result(InProgress, w.Reason, "container %s: %s", cs.Name, w.Reason)
		if w.Message != "" {
			r.Message += ": " + w.Message
		}
		return r
	}
	return result(InProgress, reason, format, args...)
}

func containerResult(pod *corev1.Pod, name string) events.ContainerResult {
	r := events.ContainerResult{Name: name}
	if cs := ContainerStatus(pod, name); cs != nil {
		r.Image, r.ImageID, r.RestartCount = cs.Image, cs.ImageID, cs.RestartCount
	}
	return r
}
