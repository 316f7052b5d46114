package inplace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// RollbackPatch is the JSON patch that puts every container of st back on
// its previous image and sets the state phase to RollingBack with reason.
// It tests the UID, the state annotation as read (so two writers of the
// state cannot both win) and each container's current image: a container
// that is neither on the target nor already back on the previous image was
// changed by someone else, and that is a permanent error (never stomp a
// third party's change). It returns ErrAlreadyApplied when the rollback was
// already written.
func RollbackPatch(pod *corev1.Pod, st *State, reason string, now time.Time) ([]byte, error) {
	return RollbackPatchMessage(pod, st, reason, "", now)
}

// RollbackPatchMessage is RollbackPatch that also records message (the
// kubelet's words about the failure) in the state, for the outcome event
// the rollback ends with.
func RollbackPatchMessage(pod *corev1.Pod, st *State, reason, message string, now time.Time) ([]byte, error) {
	if st == nil {
		return nil, settle.Permanentf("roll back pod %s/%s: it has no %s", pod.Namespace, pod.Name, StateAnnotation)
	}
	if st.Phase == PhaseRollingBack || st.Phase == PhaseRolledBack {
		return nil, fmt.Errorf("roll back pod %s/%s: upgrade %s is already %s: %w", pod.Namespace, pod.Name, st.UpgradeID, st.Phase, ErrAlreadyApplied)
	}
	ops := []op{testOp("/metadata/uid", string(pod.UID)), testOp(statePath, pod.Annotations[StateAnnotation])}
	next := *st
	next.Containers = append([]ContainerState(nil), st.Containers...)
	next.Phase, next.Reason, next.Message, next.RollbackAt = PhaseRollingBack, reason, message, now.UTC()
	for i := range next.Containers {
		c := &next.Containers[i]
		sc, ok := findContainer(&pod.Spec, "/spec", c.Name)
		if !ok {
			return nil, settle.Permanentf("roll back pod %s/%s: container %q is gone", pod.Namespace, pod.Name, c.Name)
		}
		if cs := ContainerStatus(pod, c.Name); cs != nil {
			c.RollbackContainerID, c.RollbackRestartCount = cs.ContainerID, cs.RestartCount
		}
		switch sc.Image {
		case c.PreviousImage:
			continue
		case c.TargetImage:
			ops = append(ops, testOp(sc.Path+"/image", c.TargetImage), replaceOp(sc.Path+"/image", c.PreviousImage))
		default:
			return nil, settle.Permanentf("roll back pod %s/%s: container %q is set to %s, neither %s nor %s (changed by someone else)",
				pod.Namespace, pod.Name, c.Name, sc.Image, c.TargetImage, c.PreviousImage)
		}
	}
	ops = append(ops, replaceOp(statePath, next.Encode()))
	return marshal(ops)
}

var statePath = "/metadata/annotations/" + escape(StateAnnotation)

// FinishPatch is the JSON patch that ends the upgrade recorded in st with
// phase (Succeeded, Failed or RolledBack) and reason, guarded by a test of
// the state annotation as read.
func FinishPatch(pod *corev1.Pod, st State, phase Phase, reason string, now time.Time) ([]byte, error) {
	raw, ok := pod.Annotations[StateAnnotation]
	if !ok {
		return nil, settle.Permanentf("finish upgrade on pod %s/%s: it has no %s", pod.Namespace, pod.Name, StateAnnotation)
	}
	if st.Phase == phase {
		return nil, fmt.Errorf("finish upgrade %s: already %s: %w", st.UpgradeID, phase, ErrAlreadyApplied)
	}
	st.Phase, st.Reason, st.FinishedAt = phase, reason, now.UTC()
	return marshal([]op{
		testOp("/metadata/uid", string(pod.UID)),
		testOp(statePath, raw),
		replaceOp(statePath, st.Encode()),
	})
}

// RollbackProgress is the completion check while the phase is RollingBack.
// A container is back when it runs its previous image again and is ready:
// either it never restarted for the upgrade (containerID unchanged since
// before the patch), or it restarted after the rollback and reports the
// previous imageID (or, when that is unknown or a moving tag moved, the
// previous image). Failed when the previous image cannot run either.
func RollbackProgress(pod *corev1.Pod, st *State) Result {
	r := rollbackProgress(pod, st)
	if pod != nil && st != nil {
		for _, c := range st.Containers {
			r.Containers = append(r.Containers, containerResult(pod, c.Name))
		}
	}
	return r
}

func rollbackProgress(pod *corev1.Pod, st *State) Result {
	if r, done := identity(pod, ""); done {
		return r
	}
	if st == nil {
		return result(Failed, ReasonChangedByOthers, "pod %s/%s has no %s", pod.Namespace, pod.Name, StateAnnotation)
	}
	for _, c := range st.Containers {
		if r, bad := specChanged(pod, c.Name, c.PreviousImage); bad {
			return r
		}
	}
	if r, wait := notObserved(pod); wait {
		return r
	}
	for _, c := range st.Containers {
		if r := containerBack(pod, c); r.Verdict != Succeeded {
			return r
		}
	}
	return result(Succeeded, ReasonRolledBack, "every container runs its previous image again and is ready")
}

func containerBack(pod *corev1.Pod, c ContainerState) Result {
	cs := ContainerStatus(pod, c.Name)
	if cs == nil {
		return result(InProgress, ReasonNoStatus, "container %s has no status yet", c.Name)
	}
	untouched := c.PreviousContainerID != "" && cs.ContainerID == c.PreviousContainerID
	moved := cs.ContainerID != c.RollbackContainerID || cs.RestartCount > c.RollbackRestartCount
	prev := imageref.DigestOf(c.PreviousImageID)
	onPrevious := untouched || (prev != "" && imageref.DigestOf(cs.ImageID) == prev) || sameImage(cs.Image, c.PreviousImage)
	// Restarts count against the previous image only while it runs and is
	// not healthy: the target may crash again before the kubelet takes the
	// rollback in, and those restarts are the target's. When the rollback
	// was written the status still showed the container from before the
	// upgrade, the kubelet may have been in the middle of the upgrade (it
	// writes no status while it kills, pulls and starts): it then restarts
	// the container once for the upgrade and once more for the rollback.
	healthy := cs.State.Running != nil && cs.Ready
	allowed := int32(1)
	if c.RollbackContainerID != "" && c.RollbackContainerID == c.PreviousContainerID {
		allowed = 2
	}
	if r, bad := crashLooped(cs, c.RollbackRestartCount, allowed); bad && onPrevious && !healthy {
		return r
	}
	// The kubelet's first status after it took the rollback in still shows
	// what its sync before ended with (its reason cache lags one sync): a
	// pull error that names the target is the target's, not the previous
	// image's.
	if r, bad := waitingFailure(cs, moved); bad && (onPrevious || r.Reason != ReasonCrashLoop) && !aboutTarget(cs, c) {
		r.Message = "the previous image cannot run either: " + r.Message
		return r
	}
	if !untouched && !moved {
		return pending(cs, ReasonRestarting, "container %s has not restarted for the rollback yet", c.Name)
	}
	if cs.State.Running == nil {
		return pending(cs, ReasonRestarting, "container %s is not running yet", c.Name)
	}
	if !onPrevious {
		return result(InProgress, ReasonRestarting, "container %s restarted but reports %s, not %s", c.Name, cs.ImageID, c.PreviousImageID)
	}
	if !cs.Ready {
		return result(InProgress, ReasonNotReady, "container %s runs %s again but is not ready", c.Name, c.PreviousImage)
	}
	return Result{Verdict: Succeeded}
}

// aboutTarget: the container waits with a message that names the target
// image (its digest, or its reference as written), so the kubelet's reason
// is about the target.
func aboutTarget(cs *corev1.ContainerStatus, c ContainerState) bool {
	w := cs.State.Waiting
	if w == nil {
		return false
	}
	return c.TargetDigest != "" && strings.Contains(w.Message, c.TargetDigest) ||
		c.TargetImage != "" && strings.Contains(w.Message, strconv.Quote(c.TargetImage))
}
