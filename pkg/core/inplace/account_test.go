package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

// withPhase rewrites the pod's state with phase, as verify's last write
// would leave it.
func withPhase(p *corev1.Pod, st *State, phase Phase, reason string) {
	next := *st
	next.Phase, next.Reason, next.FinishedAt = phase, reason, t0
	p.Annotations[StateAnnotation] = next.Encode()
}

// setImages sets every planned container's spec image to image(cp).
func setImages(p *corev1.Pod, plan events.Plan, image func(events.ContainerPlan) string) {
	for _, cp := range plan.Containers {
		for _, list := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
			for i := range list {
				if list[i].Name == cp.Name {
					list[i].Image = image(cp)
				}
			}
		}
	}
}

func gate(p *corev1.Pod, s corev1.ConditionStatus) {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ReadinessGate, Status: s})
}

func from(cp events.ContainerPlan) string { return cp.FromImage }
func to(cp events.ContainerPlan) string   { return cp.ToImage }

func TestAccountOf(t *testing.T) {
	deleting := metav1.NewTime(t0)
	tests := []struct {
		name string
		// pod is webPod patched with webPlan, not restarted yet, changed.
		change func(p *corev1.Pod, st *State)
		plan   func(*events.Plan)
		gone   bool
		want   Account
	}{
		{name: "gone", gone: true, want: Account{Stage: StageGone, Type: events.UpgradeFailed, Reason: ReasonPodDeleted, Message: "the pod is gone"}},
		{name: "replaced", change: func(p *corev1.Pod, _ *State) { p.UID = "uid-2" },
			want: Account{Stage: StageGone, Type: events.UpgradeFailed, Reason: ReasonPodReplaced, Message: "pod shop/web-1 has uid uid-2, not uid-1: it was replaced"}},
		{name: "being deleted", change: func(p *corev1.Pod, _ *State) { p.DeletionTimestamp = &deleting },
			want: Account{Stage: StageGone, Type: events.UpgradeFailed, Reason: ReasonPodDeleted, Message: "pod shop/web-1 is being deleted"}},
		{name: "not reached", change: func(p *corev1.Pod, _ *State) { *p = *webPod() },
			want: Account{Stage: StageNotPatched, Message: "the pod has no inplace.dev/state"}},
		{name: "another upgrade's state", plan: func(p *events.Plan) { p.UpgradeID = "up-2" },
			change: func(p *corev1.Pod, _ *State) { setImages(p, webPlan(), from) },
			want:   Account{Stage: StageNotPatched, Message: "the pod's state belongs to upgrade up-1"}},
		{name: "a state that is no state", change: func(p *corev1.Pod, _ *State) {
			*p = *webPod()
			p.Annotations = map[string]string{StateAnnotation: "{"}
		}, want: Account{Stage: StageNotPatched, Message: "pod shop/web-1: annotation inplace.dev/state: unexpected end of JSON input"}},
		{name: "no patch, every target set by someone else", change: func(p *corev1.Pod, _ *State) {
			*p = *webPod()
			setImages(p, webPlan(), to)
		}, want: Account{Stage: StageUpToDate, Message: "the pod has no inplace.dev/state; every planned container is already set to its target"}},
		{name: "patched, not restarted", change: func(p *corev1.Pod, _ *State) { gate(p, corev1.ConditionTrue) },
			want: Account{Stage: StageMoving, Message: "Restarting: container proxy has not restarted yet", PatchedAt: t0}},
		{name: "restarted onto the targets, gate not open", change: func(p *corev1.Pod, _ *State) { upgraded(p) },
			want: Account{Stage: StageMoving, Message: "the gate inplace.dev/ready is not open yet", PatchedAt: t0}},
		{name: "restarted onto the targets, gate open", change: func(p *corev1.Pod, _ *State) { upgraded(p); gate(p, corev1.ConditionTrue) },
			want: Account{Stage: StagePassed, Type: events.UpgradeSucceeded, Reason: ReasonUpdated,
				Message: "every container runs docker.io/library/nginx:1.25.1@" + dgNew + " and is ready", PatchedAt: t0}},
		{name: "restarted onto the targets, no gate", change: func(p *corev1.Pod, _ *State) { upgraded(p); p.Spec.ReadinessGates = nil },
			want: Account{Stage: StagePassed, Type: events.UpgradeSucceeded, Reason: ReasonUpdated,
				Message: "every container runs docker.io/library/nginx:1.25.1@" + dgNew + " and is ready", PatchedAt: t0}},
		{name: "crash-looping", change: func(p *corev1.Pod, _ *State) {
			p.Spec.ReadinessGates = nil
			upgraded(p)
			setStatus(p, waiting("app", "docker.io/library/nginx@"+dgNew, "containerd://app-3", 3, "CrashLoopBackOff", "back-off"))
		}, want: Account{Stage: StageMoving, Message: "CrashLoopBackOff: container app restarted 3 times since the patch; last exit code 0 (Completed)", PatchedAt: t0}},
		{name: "Succeeded", change: func(p *corev1.Pod, st *State) { withPhase(p, st, PhaseSucceeded, ReasonUpdated) },
			want: Account{Stage: StageEnded, Type: events.UpgradeSucceeded, Reason: ReasonUpdated, PatchedAt: t0, FinishedAt: t0}},
		{name: "Succeeded, on the previous images", change: func(p *corev1.Pod, st *State) {
			withPhase(p, st, PhaseSucceeded, ReasonUpdated)
			setImages(p, webPlan(), from)
		}, want: Account{Stage: StageMoving, Reason: ReasonUpdated, PatchedAt: t0,
			Message: "the state says Succeeded, but container proxy is set to docker.io/library/nginx:1.24.0, not docker.io/library/nginx:1.25.1@" + dgNew}},
		{name: "Failed", change: func(p *corev1.Pod, st *State) { withPhase(p, st, PhaseFailed, ReasonChangedByOthers) },
			want: Account{Stage: StageEnded, Type: events.UpgradeFailed, Reason: ReasonChangedByOthers, PatchedAt: t0, FinishedAt: t0}},
		{name: "rolling back", change: func(p *corev1.Pod, st *State) { withPhase(p, st, PhaseRollingBack, ReasonCrashLoop) },
			want: Account{Stage: StageMoving, Reason: ReasonCrashLoop, Message: "upgrade up-1 is RollingBack", PatchedAt: t0}},
		{name: "RolledBack", change: func(p *corev1.Pod, st *State) {
			withPhase(p, st, PhaseRolledBack, ReasonCrashLoop)
			setImages(p, webPlan(), from)
		}, want: Account{Stage: StageEnded, Type: events.UpgradeRolledBack, Reason: ReasonCrashLoop, PatchedAt: t0, FinishedAt: t0}},
		{name: "RolledBack, a container the patch found on its target left there", change: func(p *corev1.Pod, st *State) {
			withPhase(p, st, PhaseRolledBack, ReasonCrashLoop)
			setImages(p, webPlan(), from)
			p.Spec.Containers[0].Image = "nginx:1.25.1@" + dgNew // app, not in the state
			st.Containers = st.Containers[:1]
			withPhase(p, st, PhaseRolledBack, ReasonCrashLoop)
		}, want: Account{Stage: StageEnded, Type: events.UpgradeRolledBack, Reason: ReasonCrashLoop, PatchedAt: t0, FinishedAt: t0}},
		{name: "RolledBack, still on the targets", change: func(p *corev1.Pod, st *State) { withPhase(p, st, PhaseRolledBack, ReasonCrashLoop) },
			want: Account{Stage: StageMoving, Reason: ReasonCrashLoop, PatchedAt: t0,
				Message: "the state says RolledBack, but container proxy is set to docker.io/library/nginx:1.25.1@" + dgNew + ", not docker.io/library/nginx:1.24.0"}},
		{name: "a resize not ended", plan: func(p *events.Plan) { p.Resize = &events.ResizePlan{RequestID: "r-1"} },
			change: func(p *corev1.Pod, st *State) {
				st.Resize = &events.ResizePlan{RequestID: "r-1"}
				p.Annotations[StateAnnotation] = st.Encode()
				upgraded(p)
				gate(p, corev1.ConditionTrue)
			}, want: Account{Stage: StageMoving, Message: "the resize has not ended", PatchedAt: t0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := webPlan()
			pod, st := patchedWith(t, plan)
			if tt.change != nil {
				tt.change(pod, st)
			}
			if tt.plan != nil {
				tt.plan(&plan)
			}
			if tt.gone {
				pod = nil
			}
			if diff := cmp.Diff(tt.want, AccountOf(pod, plan)); diff != "" {
				t.Errorf("AccountOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContradicts(t *testing.T) {
	const ok = ""
	accounts := map[string]Account{
		"gone":        {Stage: StageGone, Type: events.UpgradeFailed, Message: "the pod is gone"},
		"not patched": {Stage: StageNotPatched, Message: "the pod has no inplace.dev/state"},
		"up to date":  {Stage: StageUpToDate, Message: "set"},
		"moving":      {Stage: StageMoving, Message: "Restarting: container app has not restarted yet"},
		"passed":      {Stage: StagePassed, Type: events.UpgradeSucceeded, Message: "every container runs x"},
		"succeeded":   {Stage: StageEnded, Type: events.UpgradeSucceeded},
		"failed":      {Stage: StageEnded, Type: events.UpgradeFailed},
		"rolled back": {Stage: StageEnded, Type: events.UpgradeRolledBack, Message: "m"},
	}
	tests := []struct {
		account, typ, reason, want string
	}{
		{"not patched", events.UpgradeSucceeded, "", "the pod shows the upgrade not patched: the pod has no inplace.dev/state"},
		{"moving", events.UpgradeSucceeded, "", "the pod shows the upgrade still under way: Restarting: container app has not restarted yet"},
		{"gone", events.UpgradeSucceeded, "", "the pod shows the upgrade gone: the pod is gone"},
		{"rolled back", events.UpgradeSucceeded, "", "the pod shows the upgrade ended RolledBack: m"},
		{"failed", events.UpgradeSucceeded, "", "the pod shows the upgrade ended Failed: "},
		{"succeeded", events.UpgradeSucceeded, "", ok},
		{"passed", events.UpgradeSucceeded, "", ok},
		{"up to date", events.UpgradeSucceeded, "AlreadyUpToDate", ok},

		{"rolled back", events.UpgradeRolledBack, "CrashLoopBackOff", ok},
		{"gone", events.UpgradeRolledBack, "CrashLoopBackOff", ok},
		{"moving", events.UpgradeRolledBack, "CrashLoopBackOff", "the pod shows the upgrade still under way: Restarting: container app has not restarted yet"},
		{"passed", events.UpgradeRolledBack, "CrashLoopBackOff", "the pod shows the upgrade succeeded (no end written): every container runs x"},
		{"not patched", events.UpgradeRolledBack, "CrashLoopBackOff", "the pod shows the upgrade not patched: the pod has no inplace.dev/state"},

		{"gone", events.UpgradeFailed, ReasonPodDeleted, ok},
		{"not patched", events.UpgradeFailed, "NotDrained", ok},
		{"up to date", events.UpgradeFailed, ReasonNotOptedIn, ok},
		{"failed", events.UpgradeFailed, ReasonChangedByOthers, ok},
		{"moving", events.UpgradeFailed, ReasonNotOptedIn, ok},
		{"passed", events.UpgradeFailed, ReasonPolicyRefuses, ok},
		{"moving", events.UpgradeFailed, "Deadline", "the pod shows the upgrade still under way: Restarting: container app has not restarted yet"},
		{"passed", events.UpgradeFailed, ReasonCrashLoop, "the pod shows the upgrade succeeded (no end written): every container runs x"},
		{"succeeded", events.UpgradeFailed, ReasonCrashLoop, "the pod shows the upgrade ended Succeeded: "},
		{"rolled back", events.UpgradeFailed, ReasonCrashLoop, "the pod shows the upgrade ended RolledBack: m"},
	}
	for _, tt := range tests {
		t.Run(tt.account+"/"+tt.typ+"/"+tt.reason, func(t *testing.T) {
			if got := accounts[tt.account].Contradicts(tt.typ, tt.reason); got != tt.want {
				t.Errorf("Contradicts = %q; want %q", got, tt.want)
			}
		})
	}
}
