package inplace

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/resize"
)

// Reasons of a resize's progress.
const (
	// ReasonResized: every container runs the resources planned.
	ReasonResized = "Resized"
	// ReasonNotResizedBack: rolling back, the spec still asks the planned
	// resources (the resize back is yet to be sent).
	ReasonNotResizedBack = "NotResizedBack"
)

// ResizeProgress is the completion check of a resize (verify runs it
// while the state is Patched or RollingBack), from the container
// statuses' resources and the pod's resize conditions (resize.Judge), as
// a Result, so verify applies the same deadlines, minimum ready time and
// rollback as to an image change. While rolling back, the
// direction is reversed and judged against the restartCount at the
// rollback.
func ResizeProgress(pod *corev1.Pod, st *State) Result {
	back := st.Phase == PhaseRollingBack
	var waiting []string
	for _, c := range st.Containers {
		if c.Resources == nil {
			return Result{Verdict: Failed, Reason: ReasonChangedByOthers, Message: "container " + c.Name + " has no resources in the state"}
		}
		from, to, restarts := c.Resources.From, c.Resources.To, c.PreviousRestartCount
		if back {
			from, to, restarts = to, from, c.RollbackRestartCount
		}
		if specAsks(pod, c.Name, from) {
			if back {
				return Result{Verdict: InProgress, Reason: ReasonNotResizedBack, Message: "container " + c.Name + " is not resized back yet"}
			}
			waiting = append(waiting, "container "+c.Name+" is not resized yet (patch-pod sends it after the state)")
			continue
		}
		p := resize.Judge(pod, c.Name, from, to, restarts)
		if back {
			p = settlingBack(pod, c.Name, to, p)
		}
		switch p.State {
		case resize.Failed:
			reason := p.Reason
			if reason == "ResourcesChanged" || reason == "ContainerGone" {
				reason = ReasonChangedByOthers
			}
			return Result{Verdict: Failed, Reason: reason, Message: p.Message}
		case resize.Waiting:
			waiting = append(waiting, p.Message)
		}
	}
	if len(waiting) > 0 {
		return Result{Verdict: InProgress, Reason: "Resizing", Message: strings.Join(waiting, "; ")}
	}
	return Result{Verdict: Succeeded, Reason: ReasonResized, Message: "resized"}
}

// settlingBack: on the way back the spec asks what the kubelet had
// admitted before, so a PodResizePending Infeasible left from the resize
// being undone is stale until the kubelet sees the spec again: wait
// (within the rollback deadline) rather than fail. An Error still fails.
// A container that never left those resources needs no restart.
func settlingBack(pod *corev1.Pod, name string, to corev1.ResourceRequirements, p resize.Progress) resize.Progress {
	if p.State == resize.Failed && p.Reason == corev1.PodReasonInfeasible {
		return resize.Progress{State: resize.Waiting, Reason: p.Reason, Message: "the kubelet has yet to clear: " + p.Message}
	}
	cs := ContainerStatus(pod, name)
	if p.State == resize.Waiting && p.Reason == "NotRestarted" && cs != nil && cs.Resources != nil && resize.Equal(cs.Resources, &to) {
		return resize.Progress{State: resize.Done, Reason: ReasonResized, Message: fmt.Sprintf("container %s runs with %s", name, resize.String(to))}
	}
	return p
}

func specAsks(pod *corev1.Pod, name string, r corev1.ResourceRequirements) bool {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return resize.Equal(&pod.Spec.Containers[i].Resources, &r)
		}
	}
	return false
}
