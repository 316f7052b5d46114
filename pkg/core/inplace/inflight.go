package inplace

import corev1 "k8s.io/api/core/v1"

// InFlight reports whether the upgrade st records is still moving on pod:
// rolling back, or patched and not yet done. An upgrade that succeeded on
// a pod with no gate left to open has no write of its own: its state stays
// Patched and its success is on the bus and in the rollout record, so a
// Patched state whose pod passes the completion check (every container
// moved, runs the target and is ready) counts as ended here. What a pod
// shows may change later (a crash after success makes the check fail
// again): whoever would write on that ground asks the rollout record first
// (verify's and patch-pod's guards do).
func InFlight(pod *corev1.Pod, st *State) bool {
	switch {
	case st == nil || pod == nil:
		return false
	case st.Phase == PhaseRollingBack:
		return true
	case st.Phase != PhasePatched:
		return false
	case st.Resize != nil:
		return true // a resize's end is always written (its check is not Progress)
	}
	if HasGate(pod) {
		if s, _ := GateStatus(pod); s != corev1.ConditionTrue {
			return true // verify's last write, with the gate, closes it
		}
	}
	return Progress(pod, st, PlanFromState(pod, st)).Verdict != Succeeded
}

// Done is the upgrade pod shows ended well with nothing left to wait for,
// "" otherwise: its state records the upgrade patched (no longer InFlight)
// or succeeded, with no min-ready time, and the pod is Ready. A pod whose
// state cannot be read shows nothing.
func Done(pod *corev1.Pod) string {
	if _, ok := pod.Annotations[StateAnnotation]; !ok || !Ready(pod) {
		return ""
	}
	st, err := ParseState(pod)
	switch {
	case err != nil || st.MinReadySeconds != 0:
		return ""
	case st.Phase == PhaseSucceeded, st.Phase == PhasePatched && !InFlight(pod, st):
		return st.UpgradeID
	}
	return ""
}
