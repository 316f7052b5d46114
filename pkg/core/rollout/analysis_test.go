package rollout

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
)

// canarySpec is one canary pod measured once, then an approval, then 50%.
func canarySpec() analysis.Spec {
	one, half := intstr.FromInt32(1), intstr.FromString("50%")
	return analysis.Spec{Steps: []analysis.Step{
		{Canary: &one, Bake: "30s", Analysis: &analysis.Analysis{Interval: "10s", Queries: []analysis.Query{
			{Name: "errors", Query: `sum(rate(x{pod=~"{{.Pods}}"}[1m]))`, Comparison: "<", Threshold: 0.05},
		}}},
		{Approval: true},
		{Canary: &half},
	}}
}

func TestAnalysisRecordRoundTrips(t *testing.T) {
	v := 0.01
	r := Begin(nil, "u1", wl, push, Options{Budget: 1}, t0)
	r.Analysis = &Analysis{Spec: canarySpec(), Source: "annotation", Step: 1, StepStartedAt: t0,
		Measurements: []analysis.Measurement{{Query: "errors", At: t0, Value: &v}},
		Verdicts:     []StepVerdict{{Step: 0, Phase: analysis.Passed, Reason: "all passed", CanaryPods: []string{"web-00"}, At: t0}}}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Rollout
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.Analysis, back.Analysis); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	c := r.Clone()
	if diff := cmp.Diff(r.Analysis, c.Analysis); diff != "" {
		t.Errorf("Clone (-want +got):\n%s", diff)
	}
	*c.Analysis.Measurements[0].Value = 9
	c.Analysis.Spec.Steps[0].Canary.IntVal = 7
	if *r.Analysis.Measurements[0].Value != 0.01 || r.Analysis.Spec.Steps[0].Canary.IntVal != 1 {
		t.Error("the clone shares the analysis with the original")
	}
}

// moving is how many pods are in flight or moved under r's upgrade.
func moving(r *Rollout) int { return len(r.CanaryPods()) }

// succeed records the success of every pod in flight.
func succeed(t *testing.T, r *Rollout, now time.Time) {
	t.Helper()
	for _, p := range r.Pods {
		if p.State == InFlight {
			Record(r, events.UpgradeSucceeded, outcome(r, p.Name), "ok-"+p.Name, now)
		}
	}
}

// analysed begins a rollout of w under spec with a budget of 3.
func analysed(spec analysis.Spec) *Rollout {
	r := Begin(nil, "u1", wl, push, Options{Budget: 3}, t0)
	r.Analysis = &Analysis{Spec: spec}
	return r
}

func TestCanaryStepsCapPlanningAndAdvance(t *testing.T) {
	w := newWorld(10, 2)
	r := analysed(canarySpec())
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	if got := Plan(r, w.cands(), "push", false, at(0)); len(got) != 1 {
		t.Fatalf("first wave planned %v; want the one canary pod (budget 3)", names(got))
	}
	Plan(r, w.cands(), "again", false, at(1))
	if moving(r) != 1 || r.Canaried() {
		t.Fatalf("re-plan during the canary wave: %d pods moving, canaried %v; want 1, false", moving(r), r.Canaried())
	}
	succeed(t, r, at(2))
	if !r.Canaried() || !StartStep(r, at(2)) || StartStep(r, at(3)) {
		t.Fatal("the canary is in: the step's clock starts once")
	}
	Plan(r, w.cands(), "during-bake", false, at(3))
	if moving(r) != 1 || Settle(r, "x", at(3)) {
		t.Fatalf("during the bake %d pods moving (want 1), or it settled", moving(r))
	}
	if v, _ := Judge(r, at(10)); v.Phase != analysis.Running || !v.Next.Equal(at(32)) {
		t.Fatalf("baking: %+v; want Running until %s", v, at(32))
	}
	good := 0.01
	AddMeasurements(r, 0, at(2), []analysis.Measurement{{Query: "errors", At: at(32), Value: &good}}, at(32))
	v, _ := Judge(r, at(32))
	if v.Phase != analysis.Passed || !EndStep(r, v, "judge", time.Hour, at(32)) {
		t.Fatalf("a good measurement: %+v; want Passed", v)
	}
	if r.Phase != AwaitingApproval || r.Analysis.Step != 1 {
		t.Fatalf("after step 1: phase %s step %d; want AwaitingApproval at step 1", r.Phase, r.Analysis.Step)
	}
	if !Approve(r, "alice", "", "approve", w.cands(), at(40)) || r.Analysis.Step != 2 {
		t.Fatalf("approve: step %d; want 2", r.Analysis.Step)
	}
	Plan(r, w.cands(), "w2", false, at(41)) // 50%: 4 more, 3 at once
	if moving(r) != 4 {
		t.Fatalf("step 3's first wave: %d moving; want 4 (1 + a budget of 3)", moving(r))
	}
	succeed(t, r, at(42))
	Plan(r, w.cands(), "w3", false, at(43))
	if moving(r) != 5 {
		t.Fatalf("step 3's second wave: %d moving; want 5 (50%% of 10)", moving(r))
	}
	succeed(t, r, at(44))
	StartStep(r, at(44))
	v, _ = Judge(r, at(44))
	if v.Phase != analysis.Passed || !EndStep(r, v, "judge2", time.Hour, at(44)) || !r.Analysis.Done() {
		t.Fatalf("step 3 (no bake, no queries): %+v; want Passed and the analysis done", v)
	}
	for i := range 4 {
		Plan(r, w.cands(), fmt.Sprintf("rest-%d", i), false, at(50+i))
		succeed(t, r, at(50+i))
	}
	if !Settle(r, "done", at(60)) || moving(r) != 10 {
		t.Fatalf("the remaining waves: %d moved, phase %s; want all 10 and Syncing", moving(r), r.Phase)
	}
	if got := len(r.Analysis.Verdicts); got != 3 {
		t.Errorf("%d verdicts kept; want 3", got)
	}
}

func TestFailedAnalysisHaltsAndUndoesTheCanary(t *testing.T) {
	w := newWorld(4, 1)
	r := analysed(canarySpec())
	Plan(r, w.cands(), "push", false, t0)
	succeed(t, r, t0)
	StartStep(r, t0)
	bad := 0.1
	AddMeasurements(r, 0, t0, []analysis.Measurement{{Query: "errors", At: t0.Add(30 * time.Second), Value: &bad}}, t0)
	v, _ := Judge(r, t0.Add(30*time.Second))
	EndStep(r, v, "judge", time.Hour, t0.Add(30*time.Second))
	if r.Phase != Halted || r.Reason != events.ReasonAnalysisFailed || r.HaltedBy != "judge" {
		t.Fatalf("phase %s reason %s; want Halted AnalysisFailed", r.Phase, r.Reason)
	}
	if want := "analysis step 1 of 3: query errors: 0.1, want < 0.05 (1 failed, 0 tolerated)"; r.Message != want {
		t.Errorf("message %q; want %q", r.Message, want)
	}
	Plan(r, w.cands(), "later", false, t0.Add(time.Minute))
	if moving(r) != 1 {
		t.Errorf("a halted analysis moved %d pods; want the canary alone", moving(r))
	}
	back, ok, err := Back(r)
	if err != nil || !ok {
		t.Fatalf("Back: %v %v", ok, err)
	}
	if back.Undo != "u1" || back.Tag != "1.2.0" || !back.AllowOlder || *back.Target != wl || !cmp.Equal(back.Containers, []string{"app"}) {
		t.Errorf("Back = %+v; want the undo of u1 to 1.2.0 for app", back)
	}
}

func TestInconclusiveAnalysisHaltsWithoutUndo(t *testing.T) {
	w := newWorld(4, 1)
	r := analysed(canarySpec())
	Plan(r, w.cands(), "push", false, t0)
	succeed(t, r, t0)
	StartStep(r, t0)
	var ms []analysis.Measurement
	for s := 30; s <= 60; s += 10 {
		ms = append(ms, analysis.Measurement{Query: "errors", At: t0.Add(time.Duration(s) * time.Second), Error: "connection refused"})
	}
	AddMeasurements(r, 0, t0, ms, t0)
	v, _ := Judge(r, t0.Add(time.Minute))
	EndStep(r, v, "judge", time.Hour, t0.Add(time.Minute))
	if r.Phase != Halted || r.Reason != events.ReasonAnalysisInconclusive {
		t.Fatalf("phase %s reason %s; want Halted AnalysisInconclusive", r.Phase, r.Reason)
	}
	if _, ok, _ := Back(r); ok {
		t.Error("an inconclusive analysis undoes the canary; want it left for an operator")
	}
}

func TestMeasurementsOfAnEndedStepAreDropped(t *testing.T) {
	w := newWorld(4, 1)
	r := analysed(canarySpec())
	Plan(r, w.cands(), "push", false, t0)
	succeed(t, r, t0)
	StartStep(r, t0)
	v := 0.01
	m := analysis.Measurement{Query: "errors", At: t0, Value: &v}
	if AddMeasurements(r, 0, t0.Add(time.Second), []analysis.Measurement{m}, t0) || AddMeasurements(r, 1, t0, []analysis.Measurement{m}, t0) {
		t.Error("a measurement for another step (or another start) was kept")
	}
	if !AddMeasurements(r, 0, t0, []analysis.Measurement{m}, t0) || AddMeasurements(r, 0, t0, []analysis.Measurement{m}, t0) {
		t.Error("a measurement was not kept exactly once")
	}
}

// An approval step after a canary that is rejected or expires ends the
// rollout Rejected with the canary on the new version: Back undoes it,
// made by the input that decided. A rejection before any pod moved (a
// plain approval gate) has nothing to undo.
func TestRejectedCanaryIsUndone(t *testing.T) {
	for _, reason := range []string{ReasonRejected, ReasonApprovalExpired} {
		t.Run(reason, func(t *testing.T) {
			w := newWorld(4, 1)
			r := analysed(canarySpec())
			Plan(r, w.cands(), "push", false, t0)
			succeed(t, r, t0)
			StartStep(r, t0)
			good := 0.01
			AddMeasurements(r, 0, t0, []analysis.Measurement{{Query: "errors", At: t0.Add(30 * time.Second), Value: &good}}, t0)
			v, _ := Judge(r, t0.Add(30*time.Second))
			EndStep(r, v, "judge", time.Hour, t0.Add(30*time.Second))
			if r.Phase != AwaitingApproval {
				t.Fatalf("phase %s; want AwaitingApproval after the canary passed", r.Phase)
			}
			if _, ok, _ := Back(r); ok {
				t.Fatal("Back while awaiting approval; want nothing until it is decided")
			}
			if !Reject(r, reason, "bob", "no", "decision-1", t0.Add(time.Minute)) {
				t.Fatal("Reject refused")
			}
			if r.EndedBy() != "decision-1" {
				t.Errorf("EndedBy %q; want the decision's id", r.EndedBy())
			}
			back, ok, err := Back(r)
			if err != nil || !ok || back.Undo != "u1" || !cmp.Equal(back.Containers, []string{"app"}) {
				t.Fatalf("Back = %+v, %v, %v; want the undo of u1's canary", back, ok, err)
			}
		})
	}
	gate := Begin(nil, "u2", wl, push, Options{Budget: 1}, t0)
	AwaitApproval(gate, "major", "push", time.Hour, t0)
	Reject(gate, ReasonRejected, "bob", "no", "decision-2", t0)
	if _, ok, _ := Back(gate); ok {
		t.Error("Back of a rejection before anything moved; want nothing")
	}
}
