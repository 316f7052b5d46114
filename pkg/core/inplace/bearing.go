package inplace

import corev1 "k8s.io/api/core/v1"

// Bearing is what verify's decision on a patched upgrade of images reads
// from the pod: the completion check's verdict (Progress), its reason
// unless the check waits, whether the gate patch-pod closed for the
// upgrade is still held and, while it is, whether the kubelet has taken
// the patch up (verify opens the gate then), and the gate's status. While
// the check waits (InProgress), verify waits, whatever the reason, until
// a deadline its timer keeps or a change of the bearing: two states of a
// pod with the same bearing get the same decision.
type Bearing struct {
	Verdict Verdict
	Reason  string
	Held    bool
	Taken   bool
	Gate    corev1.ConditionStatus
}

// BearingOf is pod's bearing under st; false where every change of the
// pod may bear on the decision: a rollback (its check is
// RollbackProgress), a resize or a restart (checks of their own), or no
// Patched upgrade at all.
func BearingOf(pod *corev1.Pod, st *State) (Bearing, bool) {
	if pod == nil || st == nil || st.Phase != PhasePatched || st.Resize != nil || st.Restart != nil {
		return Bearing{}, false
	}
	plan := PlanFromState(pod, st)
	r := progress(pod, st, plan)
	b := Bearing{Verdict: r.Verdict, Held: GateHeldFor(pod, st.UpgradeID)}
	if r.Verdict != InProgress {
		b.Reason = r.Reason
	}
	if b.Held {
		b.Taken = taken(pod, st, plan, r)
	}
	b.Gate, _ = GateStatus(pod)
	return b, true
}
