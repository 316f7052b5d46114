package patchpod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// EventRestart is the reason of the Event on a pod whose container is
// restarted on request.
const EventRestart = "InPlaceRestart"

// restarting records, per container, that the kubelet will restart it and
// why: the image reference changed, not the bytes.
func (s *step) restarting(pod *corev1.Pod) {
	st, _ := inplace.ParseState(pod)
	for _, c := range s.plan.Containers {
		if st != nil && st.Container(c.Name) == nil {
			continue // already switched: not restarted by this patch
		}
		why := ""
		if s.plan.Restart.Reason != "" {
			why = ": " + s.plan.Restart.Reason
		}
		if s.f.d.Restarts != nil {
			s.f.d.Restarts.WithLabelValues(pod.Namespace, pod.Name, c.Name).Inc()
		}
		s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventRestart,
			"Container %s will be restarted in place on the same image %s (reference %q → %q, restart %s)%s",
			c.Name, c.ToDigest, c.FromImage, c.ToImage, s.plan.UpgradeID, why)
	}
}
