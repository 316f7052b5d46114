package inplace

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// Progress is the completion check verify runs while the state phase is
// Patched, decided from the pod alone. A container is done when it moved
// (its containerID changed or restartCount went up), runs the target
// (status imageID has the planned digest; without a digest, the imageID
// changed or the status image is the spec image) and is ready. The readiness
// gate is not required: verify sets it True after success.
//
// Failed reasons: the pod was replaced or is being deleted, a container's
// image was changed by someone else, the kubelet reports a waiting reason it
// does not recover from (image pull errors, CrashLoopBackOff once the new
// container ran, config and runtime errors), the container restarted more
// than once, or it runs a digest other than the planned one.
func Progress(pod *corev1.Pod, st *State, plan events.Plan) Result {
	r := progress(pod, st, plan)
	if pod != nil {
		for _, cp := range plan.Containers {
			r.Containers = append(r.Containers, containerResult(pod, cp.Name))
		}
	}
	return r
}

func progress(pod *corev1.Pod, st *State, plan events.Plan) Result {
	if r, done := identity(pod, plan.Pod.UID); done {
		return r
	}
	switch {
	case st == nil:
		return result(InProgress, ReasonNotPatched, "the pod has no %s yet", StateAnnotation)
	case st.UpgradeID != plan.UpgradeID:
		return result(Failed, ReasonSuperseded, "the pod's state belongs to upgrade %s", st.UpgradeID)
	}
	for _, cp := range plan.Containers {
		if r, bad := specChanged(pod, cp.Name, cp.ToImage); bad {
			return r
		}
	}
	if r, wait := notObserved(pod); wait {
		return r
	}
	var first *Result
	for _, cp := range plan.Containers {
		r := containerProgress(pod, cp, st.Container(cp.Name))
		if r.Verdict == Failed {
			return r
		}
		if r.Verdict == InProgress && first == nil {
			first = &r
		}
	}
	if first != nil {
		return *first
	}
	return result(Succeeded, ReasonUpdated, "every container runs %s and is ready", plan.Target)
}

// specChanged fails when the container's spec image is not want.
func specChanged(pod *corev1.Pod, name, want string) (Result, bool) {
	c, ok := findContainer(&pod.Spec, "/spec", name)
	if !ok {
		return result(Failed, ReasonChangedByOthers, "container %s is gone", name), true
	}
	if c.Image != want {
		return result(Failed, ReasonChangedByOthers, "container %s is set to %s, not %s", name, c.Image, want), true
	}
	return Result{}, false
}

// containerProgress checks one container; prev is nil for a container that
// already had the target image when the patch was made.
func containerProgress(pod *corev1.Pod, cp events.ContainerPlan, prev *ContainerState) Result {
	cs := ContainerStatus(pod, cp.Name)
	if cs == nil {
		return result(InProgress, ReasonNoStatus, "container %s has no status yet", cp.Name)
	}
	moved, prevDigest := true, ""
	if prev != nil {
		moved = cs.ContainerID != prev.PreviousContainerID || cs.RestartCount > prev.PreviousRestartCount
		prevDigest = imageref.DigestOf(prev.PreviousImageID)
		if r, bad := crashLooped(cs, prev.PreviousRestartCount, 1); bad {
			return r
		}
	}
	if r, bad := waitingFailure(cs, moved); bad {
		return r
	}
	if !moved {
		return pending(cs, ReasonRestarting, "container %s has not restarted yet", cp.Name)
	}
	if cs.State.Running == nil {
		return pending(cs, ReasonRestarting, "container %s is not running yet", cp.Name)
	}
	if r, ok := runsTarget(cs, cp, prevDigest); !ok {
		return r
	}
	if !cs.Ready {
		return result(InProgress, ReasonNotReady, "container %s runs %s but is not ready", cp.Name, cp.ToImage)
	}
	return Result{Verdict: Succeeded}
}

// runsTarget checks the running image of a container that moved.
func runsTarget(cs *corev1.ContainerStatus, cp events.ContainerPlan, prevDigest string) (Result, bool) {
	d := imageref.DigestOf(cs.ImageID)
	switch {
	case cp.ToDigest != "" && d == cp.ToDigest:
		return Result{}, true
	case cp.ToDigest != "" && d != "" && d != prevDigest:
		return result(Failed, ReasonUnexpectedImage, "container %s runs %s, not the planned %s", cp.Name, d, cp.ToDigest), false
	case cp.ToDigest == "" && (d != "" && d != prevDigest || sameImage(cs.Image, cp.ToImage)):
		return Result{}, true
	}
	return result(InProgress, ReasonRestarting, "container %s restarted but still reports %s", cp.Name, cs.ImageID), false
}

// Restarted reports whether the kubelet has replaced every planned
// container: each moved and runs its target, ready or not (Progress
// without the readiness). The old containers are gone then, so the pod's
// Ready follows the new containers' own readiness.
func Restarted(pod *corev1.Pod, st *State, plan events.Plan) bool {
	r := progress(pod, st, plan)
	switch {
	case r.Verdict == Succeeded:
		return true
	case r.Verdict == Failed || r.Reason != ReasonNotReady:
		return false
	}
	for _, cp := range plan.Containers {
		c := containerProgress(pod, cp, st.Container(cp.Name))
		if c.Verdict != Succeeded && c.Reason != ReasonNotReady {
			return false
		}
	}
	return true
}

// Taken reports whether the kubelet has taken the upgrade's patch up, so
// that the pod's Ready can only follow the new containers from now on. A
// kubelet that reports status.observedGeneration writes the patched
// generation in the sync that stops the changed containers, before it
// stops them; its pod worker runs one sync at a time, and only a later
// sync (after the old containers stopped) computes Ready from the pod's
// conditions again. A kubelet that does not report it has taken the patch
// up once every planned container was replaced (Restarted).
func Taken(pod *corev1.Pod, st *State, plan events.Plan) bool {
	return taken(pod, st, plan, progress(pod, st, plan))
}

// taken is Taken with the completion check r already run.
func taken(pod *corev1.Pod, st *State, plan events.Plan, r Result) bool {
	switch {
	case r.Verdict == Succeeded:
		return true
	case r.Verdict == Failed || r.Reason == ReasonNotObserved || r.Reason == ReasonNotPatched:
		return false
	case pod.Status.ObservedGeneration != 0:
		return true // observed: notObserved passed
	}
	return Restarted(pod, st, plan)
}
