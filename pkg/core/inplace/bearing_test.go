package inplace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
)

// The kubelet's writes on the way (the old container stopped, the new one
// being created) leave an upgrade's bearing as it was; a failure, the
// landing and, with the gate held, the kubelet taking the patch up change
// it. A rollback, a resize and a restart have none: every change of theirs
// may bear.
func TestBearingOf(t *testing.T) {
	bearing := func(change func(*corev1.Pod, *State)) (Bearing, bool) {
		pod, st := patchedWith(t, webPlan())
		change(pod, st)
		return BearingOf(pod, st)
	}
	patched, ok := bearing(func(*corev1.Pod, *State) {})
	if !ok || patched.Verdict != InProgress || patched.Reason != "" {
		t.Fatalf("BearingOf(patched) = %+v, %v; want InProgress, no reason", patched, ok)
	}
	same := map[string]func(*corev1.Pod, *State){
		"old container stopped": func(p *corev1.Pod, _ *State) { setStatus(p, terminated("app", "docker.io/library/nginx@"+dgOld)) },
		"new container being created": func(p *corev1.Pod, _ *State) {
			setStatus(p, waiting("app", "", "containerd://app-1", 0, "ContainerCreating", ""))
		},
	}
	for name, change := range same {
		if got, ok := bearing(change); !ok || got != patched {
			t.Errorf("%s: BearingOf = %+v, %v; want %+v", name, got, ok, patched)
		}
	}
	moved := map[string]func(*corev1.Pod, *State){
		"pull failed": func(p *corev1.Pod, _ *State) {
			setStatus(p, waiting("app", "", "containerd://app-1", 0, "ImagePullBackOff", "back-off"))
		},
		"landed":        func(p *corev1.Pod, _ *State) { upgraded(p) },
		"being deleted": func(p *corev1.Pod, _ *State) { p.DeletionTimestamp = &p.CreationTimestamp },
		"gate set True": func(p *corev1.Pod, _ *State) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ReadinessGate, Status: corev1.ConditionTrue})
		},
	}
	for name, change := range moved {
		if got, ok := bearing(change); !ok || got == patched {
			t.Errorf("%s: BearingOf = %+v, %v; want other than %+v", name, got, ok, patched)
		}
	}
	none := map[string]func(*corev1.Pod, *State){
		"rolling back": func(_ *corev1.Pod, st *State) { st.Phase = PhaseRollingBack },
		"resize":       func(_ *corev1.Pod, st *State) { st.Resize = &events.ResizePlan{} },
		"restart":      func(_ *corev1.Pod, st *State) { st.Restart = &events.RestartPlan{} },
		"succeeded":    func(_ *corev1.Pod, st *State) { st.Phase = PhaseSucceeded },
	}
	for name, change := range none {
		if got, ok := bearing(change); ok {
			t.Errorf("%s: BearingOf = %+v, true; want none", name, got)
		}
	}
}
