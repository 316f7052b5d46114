package verify

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// Event reasons of a restart (a container.restart.requested).
const (
	EventRestarted     = "InPlaceRestarted"
	EventRestartFailed = "InPlaceRestartFailed"
)

// restartDecision: a restart has nothing to roll back to (the container
// runs the same bytes either way), so what would roll back an upgrade
// fails the pod's restart: a crash after the restart, a container not
// back within the deadline. Whether the request goes on is compute-spec's
// (failurePolicy).
func restartDecision(d decision) decision {
	if d.act == rollback {
		d.act = fail
	}
	return d
}

// restartEvent records the end of a restart on the pod, in the kubelet's
// words.
func (s *step) restartEvent(pod *corev1.Pod, plan events.Plan, st *inplace.State, phase inplace.Phase, d decision) {
	names := make([]string, 0, len(st.Containers))
	for _, c := range st.Containers {
		names = append(names, c.Name)
	}
	which := strings.Join(names, ", ")
	if phase == inplace.PhaseSucceeded {
		s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventRestarted,
			"Restarted container %s in place on the same image (restart %s)", which, plan.UpgradeID)
		return
	}
	s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventRestartFailed,
		"In-place restart of container %s failed: %s: %s (restart %s)", which, d.reason, d.message, plan.UpgradeID)
}
