package inplace

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// TestPlanFromState: the plan rebuilt from a patched pod's state is the
// plan the patch was made from, so an outcome decided on pod.updated keys
// exactly like one decided on pod.patched.
func TestPlanFromState(t *testing.T) {
	tests := []struct {
		name string
		edit func(*events.Plan)
	}{
		{"digest plan", func(*events.Plan) {}},
		{"every plan field", func(p *events.Plan) {
			p.Wave, p.GraceSeconds, p.VerifySeconds, p.Prepull, p.ReadinessGate = 2, 5, 120, true, true
			p.PlannedAt = t0.Add(-time.Minute)
			p.Owner.UID = "dep-uid"
			p.Attempt = 2
		}},
		{"tag plan", func(p *events.Plan) { *p = tagOnlyPlan() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := webPlan()
			tt.edit(&want)
			pod, st := patchedWith(t, want)
			pod.Spec.NodeName = want.Pod.Node
			if diff := cmp.Diff(want, PlanFromState(pod, st)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStepID(t *testing.T) {
	plan := webPlan()
	id := StepID(plan, events.UpgradeSucceeded)
	if id != events.DeriveID("up-1/uid-1", events.UpgradeSucceeded, "") {
		t.Errorf("StepID = %s, want DeriveID(upgradeID/podUID, type, \"\")", id)
	}
	other := plan
	other.Pod.UID = "uid-2"
	retry := plan
	retry.Attempt = 1
	for _, o := range []string{StepID(plan, events.UpgradeFailed), StepID(other, events.UpgradeSucceeded), StepID(retry, events.UpgradeSucceeded)} {
		if o == id {
			t.Errorf("StepID collides for another type, pod or attempt: %s", o)
		}
	}
	if StepID(retry, events.UpgradeSucceeded) != StepID(retry, events.UpgradeSucceeded) {
		t.Error("StepID of one attempt is not stable")
	}
}

func TestRollbackPatchMessage(t *testing.T) {
	pod, st := failedPod(t)
	patch, err := RollbackPatchMessage(pod, st, "ImagePullBackOff", "Back-off pulling image", t1)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err != nil {
		t.Fatal(err)
	}
	next, err := ParseState(&got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"RollingBack", "ImagePullBackOff", "Back-off pulling image"},
		[]string{string(next.Phase), next.Reason, next.Message}); diff != "" {
		t.Errorf("phase, reason, message (-want +got):\n%s", diff)
	}
}

func TestInitGatePatch(t *testing.T) {
	gateTrue := corev1.PodCondition{Type: ReadinessGate, Status: corev1.ConditionTrue, Reason: GateReasonIdle,
		Message: "no in-place upgrade in flight", LastTransitionTime: metav1.NewTime(t0)}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse}
	tests := []struct {
		name    string
		edit    func(*corev1.Pod)
		want    []corev1.PodCondition
		wantErr error
	}{
		{"adds to the conditions", func(p *corev1.Pod) { p.Status.Conditions = []corev1.PodCondition{ready} },
			[]corev1.PodCondition{ready, gateTrue}, nil},
		{"creates the conditions", func(p *corev1.Pod) { p.Status.Conditions = nil },
			[]corev1.PodCondition{gateTrue}, nil},
		{"finished upgrade", func(p *corev1.Pod) {
			p.Annotations = map[string]string{StateAnnotation: `{"upgradeID":"u","phase":"Succeeded","containers":[]}`}
		}, []corev1.PodCondition{gateTrue}, nil},
		{"condition exists", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: ReadinessGate, Status: corev1.ConditionFalse}}
		}, nil, ErrAlreadyApplied},
		{"no gate", func(p *corev1.Pod) { p.Spec.ReadinessGates = nil }, nil, settle.ErrPermanent},
		{"upgrade in flight", func(p *corev1.Pod) {
			p.Annotations = map[string]string{StateAnnotation: `{"upgradeID":"u","phase":"Patched","containers":[]}`}
		}, nil, settle.ErrPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := webPod()
			pod.Status.Conditions = nil
			tt.edit(pod)
			patch, err := InitGatePatch(pod, t0)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			var got corev1.Pod
			if err := apply(t, pod, patch, &got); err != nil {
				t.Fatalf("apply: %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			moved := pod.DeepCopy()
			moved.ResourceVersion = "101"
			if err := apply(t, moved, patch, &got); err == nil {
				t.Error("the patch applied to a newer resourceVersion; want its test to fail")
			}
		})
	}
}

// TestStepEvent: the id depends on the plan and type only, never on the
// input; the upgradeid is the plan's; the trace continues the input's.
func TestStepEvent(t *testing.T) {
	plan := webPlan()
	in1, err := events.New("in-1", events.PodPatched, events.Source("patch-pod"), "shop/web-1", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	in2, err := events.New("in-2", events.PodUpdated, events.Source("watcher"), "shop/web-1", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	in1.SetExtension(events.ExtUpgradeID, "up-1")
	out1, err := StepEvent(in1, plan, events.UpgradeSucceeded, events.Source("verify"), events.OutcomeData{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	out2, err := StepEvent(in2, plan, events.UpgradeSucceeded, events.Source("verify"), events.OutcomeData{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{out1.ID(), out2.ID(), events.UpgradeID(out2), out1.Subject(),
		events.TraceID(events.Ext(out1, events.ExtTraceParent))}
	want := []string{StepID(plan, events.UpgradeSucceeded), StepID(plan, events.UpgradeSucceeded), "up-1", "shop/web-1",
		events.TraceID(events.Ext(in1, events.ExtTraceParent))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("id, id, upgradeid, subject, trace (-want +got):\n%s", diff)
	}
}
