package inplace

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
)

// nextPlan is up-2, moving webPlan's containers from what pod's spec sets
// them to now to nginx:1.26.0.
func nextPlan(pod *corev1.Pod) events.Plan {
	plan := webPlan()
	plan.UpgradeID, plan.Target = "up-2", "docker.io/library/nginx:1.26.0"
	for i, cp := range plan.Containers {
		c, _ := findContainer(&pod.Spec, "/spec", cp.Name)
		plan.Containers[i] = events.ContainerPlan{Name: cp.Name, Sidecar: cp.Sidecar, FromImage: c.Image, ToImage: "nginx:1.26.0"}
	}
	return plan
}

// TestPatchRecordsTheUpgradeItReplaces: the state a patch writes over
// another upgrade's says how that one stood, as its pod showed it: its
// end (a completion check passed with no end written is a success), or
// the phase it was still in (PatchOver takes a Patched state the record
// has over); an end the spec does not bear out is not repeated.
func TestPatchRecordsTheUpgradeItReplaces(t *testing.T) {
	t1 := t0.Add(time.Minute)
	passed := "every container runs docker.io/library/nginx:1.25.1@" + dgNew + " and is ready"
	tests := []struct {
		name   string
		change func(p *corev1.Pod, st *State)
		want   *Replaced
	}{
		{name: "no state", change: func(p *corev1.Pod, _ *State) { *p = *webPod() }},
		{name: "passed, no end written", change: func(p *corev1.Pod, _ *State) { upgraded(p); p.Spec.ReadinessGates = nil },
			want: &Replaced{UpgradeID: "up-1", Phase: PhaseSucceeded, Reason: ReasonUpdated, Message: passed, PatchedAt: t0, FinishedAt: t1}},
		{name: "passed, the gate closed since by the next upgrade's drain", change: func(p *corev1.Pod, _ *State) {
			upgraded(p)
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ReadinessGate, Status: corev1.ConditionFalse,
				Reason: GateReasonStart, Message: GateStartMessage("up-2", "docker.io/library/nginx:1.26.0")})
		}, want: &Replaced{UpgradeID: "up-1", Phase: PhaseSucceeded, Reason: ReasonUpdated, Message: passed, PatchedAt: t0, FinishedAt: t1}},
		{name: "passed, the gate still held for it", change: func(p *corev1.Pod, _ *State) {
			upgraded(p)
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ReadinessGate, Status: corev1.ConditionFalse,
				Reason: GateReasonStart, Message: GateStartMessage("up-1", "docker.io/library/nginx:1.25.1")})
		}, want: &Replaced{UpgradeID: "up-1", Phase: PhasePatched, PatchedAt: t0}},
		{name: "Succeeded", change: func(p *corev1.Pod, st *State) { upgraded(p); withPhase(p, st, PhaseSucceeded, ReasonUpdated) },
			want: &Replaced{UpgradeID: "up-1", Phase: PhaseSucceeded, Reason: ReasonUpdated, PatchedAt: t0, FinishedAt: t0}},
		{name: "RolledBack", change: func(p *corev1.Pod, st *State) {
			withPhase(p, st, PhaseRolledBack, ReasonCrashLoop)
			setImages(p, webPlan(), from)
		}, want: &Replaced{UpgradeID: "up-1", Phase: PhaseRolledBack, Reason: ReasonCrashLoop, PatchedAt: t0, FinishedAt: t0}},
		{name: "Failed", change: func(p *corev1.Pod, st *State) { withPhase(p, st, PhaseFailed, ReasonChangedByOthers) },
			want: &Replaced{UpgradeID: "up-1", Phase: PhaseFailed, Reason: ReasonChangedByOthers, PatchedAt: t0, FinishedAt: t0}},
		{name: "still under way", change: func(p *corev1.Pod, _ *State) { gate(p, corev1.ConditionTrue) },
			want: &Replaced{UpgradeID: "up-1", Phase: PhasePatched, PatchedAt: t0}},
		{name: "Succeeded, on the previous images", change: func(p *corev1.Pod, st *State) {
			withPhase(p, st, PhaseSucceeded, ReasonUpdated)
			setImages(p, webPlan(), from)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := patchedWith(t, webPlan())
			tt.change(pod, st)
			patch, err := PatchOver(pod, nextPlan(pod), t1)
			if err != nil {
				t.Fatal(err)
			}
			var got corev1.Pod
			if err := apply(t, pod, patch, &got); err != nil {
				t.Fatalf("apply: %v", err)
			}
			next, err := ParseState(&got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, next.Replaced); diff != "" {
				t.Errorf("replaced (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndBefore: a timer of up-1 finds the pod under up-2; up-2's state
// tells how up-1 ended, and is believed only when it names up-1 with a
// final phase the images up-2 found bear out.
func TestEndBefore(t *testing.T) {
	plan := webPlan()
	target, previous := func(cp events.ContainerPlan) string { return cp.ToImage }, func(cp events.ContainerPlan) string { return cp.FromImage }
	tests := []struct {
		name string
		r    *Replaced
		// ran is what up-2 found each container set to; app alone is in
		// up-2's state when onlyApp, proxy is then left on its spec.
		ran     func(events.ContainerPlan) string
		onlyApp bool
		named   bool
		why     string
	}{
		{name: "nothing replaced", ran: target},
		{name: "another upgrade replaced", r: &Replaced{UpgradeID: "up-0", Phase: PhaseSucceeded}, ran: target},
		{name: "succeeded", r: &Replaced{UpgradeID: "up-1", Phase: PhaseSucceeded}, ran: target, named: true},
		{name: "succeeded, one container left alone", r: &Replaced{UpgradeID: "up-1", Phase: PhaseSucceeded}, ran: target, onlyApp: true, named: true},
		{name: "succeeded, on the previous images", r: &Replaced{UpgradeID: "up-1", Phase: PhaseSucceeded}, ran: previous, named: true,
			why: "upgrade up-2's state says upgrade up-1 Succeeded, but container proxy ran docker.io/library/nginx:1.24.0 when it took the pod"},
		{name: "rolled back", r: &Replaced{UpgradeID: "up-1", Phase: PhaseRolledBack}, ran: previous, named: true},
		{name: "rolled back, on the targets", r: &Replaced{UpgradeID: "up-1", Phase: PhaseRolledBack}, ran: target, named: true,
			why: "upgrade up-2's state says upgrade up-1 RolledBack, but every container ran its target when it took the pod"},
		{name: "failed", r: &Replaced{UpgradeID: "up-1", Phase: PhaseFailed}, ran: previous, named: true},
		{name: "still patched", r: &Replaced{UpgradeID: "up-1", Phase: PhasePatched}, ran: target, named: true,
			why: "upgrade up-1 was still Patched when upgrade up-2 took the pod"},
		{name: "rolling back", r: &Replaced{UpgradeID: "up-1", Phase: PhaseRollingBack}, ran: target, named: true,
			why: "upgrade up-1 was still RollingBack when upgrade up-2 took the pod"},
		{name: "no phase", r: &Replaced{UpgradeID: "up-1", Phase: "Done"}, ran: target, named: true,
			why: `upgrade up-2's state records upgrade up-1 in phase "Done"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := webPod()
			setImages(pod, plan, tt.ran)
			st := &State{UpgradeID: "up-2", Phase: PhasePatched, Replaced: tt.r}
			for _, cp := range plan.Containers {
				if tt.onlyApp && cp.Name != "app" {
					continue
				}
				st.Containers = append(st.Containers, ContainerState{Name: cp.Name, PreviousImage: tt.ran(cp), TargetImage: "nginx:1.26.0"})
				setImages(pod, events.Plan{Containers: []events.ContainerPlan{cp}}, func(events.ContainerPlan) string { return "nginx:1.26.0" })
			}
			r, why := EndBefore(pod, st, plan)
			if (r != nil) != tt.named || (r != nil && r != tt.r) {
				t.Errorf("EndBefore names %+v; want %+v: %v", r, tt.r, tt.named)
			}
			if why != tt.why {
				t.Errorf("why = %q; want %q", why, tt.why)
			}
		})
	}
}
