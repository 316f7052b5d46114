package inplace

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An upgrade is in flight until its pod passes the completion check with
// no gate left to open, or its state says it ended; a rollback always is;
// a Patched state that passed and then crashed is in flight again (the
// rollout record, not the pod, then says it is over).
func TestInFlight(t *testing.T) {
	gate := func(s corev1.ConditionStatus) func(*corev1.Pod, *State) {
		return func(p *corev1.Pod, _ *State) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ReadinessGate, Status: s})
		}
	}
	tests := []struct {
		name   string
		change []func(*corev1.Pod, *State)
		want   bool
	}{
		{"patched, not restarted yet", nil, true},
		{"patched, every container on the target and ready, gate False", []func(*corev1.Pod, *State){
			func(p *corev1.Pod, _ *State) { upgraded(p) }, gate(corev1.ConditionFalse)}, true},
		{"patched, every container on the target and ready, gate True", []func(*corev1.Pod, *State){
			func(p *corev1.Pod, _ *State) { upgraded(p) }, gate(corev1.ConditionTrue)}, false},
		{"patched, on the target and ready, no gate declared", []func(*corev1.Pod, *State){
			func(p *corev1.Pod, _ *State) { upgraded(p); p.Spec.ReadinessGates = nil }}, false},
		{"landed, then crashed", []func(*corev1.Pod, *State){
			func(p *corev1.Pod, _ *State) {
				upgraded(p)
				p.Spec.ReadinessGates = nil
				setStatus(p, waiting("app", "docker.io/library/nginx@"+dgNew, "containerd://app-3", 2, "CrashLoopBackOff", "back-off"))
			}}, true},
		{"rolling back", []func(*corev1.Pod, *State){func(_ *corev1.Pod, st *State) { st.Phase = PhaseRollingBack }}, true},
		{"succeeded", []func(*corev1.Pod, *State){func(_ *corev1.Pod, st *State) { st.Phase = PhaseSucceeded }}, false},
		{"no state", []func(*corev1.Pod, *State){func(p *corev1.Pod, _ *State) { delete(p.Annotations, StateAnnotation) }}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := patchedWith(t, webPlan())
			for _, c := range tt.change {
				c(pod, st)
			}
			pod.Annotations[StateAnnotation] = st.Encode()
			if tt.name == "no state" {
				delete(pod.Annotations, StateAnnotation)
				st = nil
			}
			if got := InFlight(pod, st); got != tt.want {
				t.Errorf("InFlight = %v, want %v", got, tt.want)
			}
		})
	}
}

// FinishGatePatch closes the state and opens the gate in one patch, testing
// the state as read and the condition it replaces.
func TestFinishGatePatch(t *testing.T) {
	pod, st := patchedWith(t, webPlan())
	upgraded(pod)
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		{Type: ReadinessGate, Status: corev1.ConditionFalse, Reason: GateReasonStart}}
	now := t0.Add(time.Minute)
	patch, err := FinishGatePatch(pod, *st, PhaseSucceeded, ReasonUpdated, now)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err != nil {
		t.Fatal(err)
	}
	after, err := ParseState(&got)
	if err != nil || after.Phase != PhaseSucceeded || !after.FinishedAt.Equal(now) {
		t.Errorf("state = %+v (%v), want Succeeded at %s", after, err, now)
	}
	c := got.Status.Conditions[1]
	if c.Type != ReadinessGate || c.Status != corev1.ConditionTrue || c.Reason != GateReasonDone || !c.LastTransitionTime.Equal(&metav1.Time{Time: now}) {
		t.Errorf("gate condition = %+v, want True %s", c, GateReasonDone)
	}
	if got.Status.Conditions[0] != pod.Status.Conditions[0] {
		t.Errorf("the Ready condition changed: %+v", got.Status.Conditions[0])
	}
	// Another writer closed the state meanwhile: the test of the state fails.
	moved := pod.DeepCopy()
	moved.Annotations[StateAnnotation] = after.Encode()
	if err := apply(t, moved, patch, &got); err == nil {
		t.Error("the patch applied over a state it did not read")
	}
	if _, err := FinishGatePatch(&got, *after, PhaseSucceeded, ReasonUpdated, now); err == nil {
		t.Error("a closed state with the gate True: want ErrAlreadyApplied")
	}
}

// OpenGatePatch opens the gate and leaves the state as it is, testing the
// state as read; a gate already True is ErrAlreadyApplied.
func TestOpenGatePatch(t *testing.T) {
	pod, st := patchedWith(t, webPlan())
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		{Type: ReadinessGate, Status: corev1.ConditionFalse, Reason: GateReasonStart}}
	now := t0.Add(time.Minute)
	patch, err := OpenGatePatch(pod, "replaced", now)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err != nil {
		t.Fatal(err)
	}
	if after, err := ParseState(&got); err != nil || after.Phase != st.Phase || got.Annotations[StateAnnotation] != pod.Annotations[StateAnnotation] {
		t.Errorf("state = %+v (%v), want it unchanged", after, err)
	}
	if c := got.Status.Conditions[1]; c.Type != ReadinessGate || c.Status != corev1.ConditionTrue || c.Message != "replaced" {
		t.Errorf("gate condition = %+v, want True", c)
	}
	moved := pod.DeepCopy()
	moved.Annotations[StateAnnotation] = "{}"
	if err := apply(t, moved, patch, &got); err == nil {
		t.Error("the patch applied over a state it did not read")
	}
	if _, err := OpenGatePatch(&got, "replaced", now); !errors.Is(err, ErrAlreadyApplied) {
		t.Errorf("gate already True: %v, want ErrAlreadyApplied", err)
	}
}

// Done names the upgrade a Ready pod shows ended well with no min-ready
// time to wait, and nothing for a pod still on its way or not Ready.
func TestDone(t *testing.T) {
	ready := func(s corev1.ConditionStatus) func(*corev1.Pod, *State) {
		return func(p *corev1.Pod, _ *State) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: s})
		}
	}
	gate := func(s corev1.ConditionStatus) func(*corev1.Pod, *State) {
		return func(p *corev1.Pod, _ *State) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ReadinessGate, Status: s})
		}
	}
	landed := func(p *corev1.Pod, _ *State) { upgraded(p) }
	tests := []struct {
		name   string
		change []func(*corev1.Pod, *State)
		want   string
	}{
		{"patched, landed, gate True, Ready", []func(*corev1.Pod, *State){landed, gate(corev1.ConditionTrue), ready(corev1.ConditionTrue)}, "up-1"},
		{"patched, landed, gate False", []func(*corev1.Pod, *State){landed, gate(corev1.ConditionFalse), ready(corev1.ConditionTrue)}, ""},
		{"patched, not restarted yet, Ready", []func(*corev1.Pod, *State){gate(corev1.ConditionTrue), ready(corev1.ConditionTrue)}, ""},
		{"patched, landed, not Ready", []func(*corev1.Pod, *State){landed, gate(corev1.ConditionTrue), ready(corev1.ConditionFalse)}, ""},
		{"succeeded, Ready", []func(*corev1.Pod, *State){ready(corev1.ConditionTrue), func(_ *corev1.Pod, st *State) { st.Phase = PhaseSucceeded }}, "up-1"},
		{"rolled back, Ready", []func(*corev1.Pod, *State){ready(corev1.ConditionTrue), func(_ *corev1.Pod, st *State) { st.Phase = PhaseRolledBack }}, ""},
		{"landed, Ready, min-ready-seconds", []func(*corev1.Pod, *State){landed, gate(corev1.ConditionTrue), ready(corev1.ConditionTrue),
			func(_ *corev1.Pod, st *State) { st.MinReadySeconds = 5 }}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := patchedWith(t, webPlan())
			for _, c := range tt.change {
				c(pod, st)
			}
			pod.Annotations[StateAnnotation] = st.Encode()
			if got := Done(pod); got != tt.want {
				t.Errorf("Done = %q, want %q", got, tt.want)
			}
		})
	}
	pod, _ := patchedWith(t, webPlan())
	pod.Annotations[StateAnnotation] = "{"
	ready(corev1.ConditionTrue)(pod, nil)
	if got := Done(pod); got != "" {
		t.Errorf("Done of an unreadable state = %q, want none", got)
	}
}
