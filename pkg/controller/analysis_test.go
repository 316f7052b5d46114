package controller_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/world"
)

// scripted is a Measurer that answers each query with a value (or an
// error) the test sets, and counts the measurements.
type scripted struct {
	mu     sync.Mutex
	value  float64
	err    string
	calls  int
	canary []string
}

func (s *scripted) Measure(_ context.Context, q analysis.Query, _ map[string]string, t analysis.Target, now time.Time) analysis.Measurement {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.canary = t.Canary
	m := analysis.Measurement{Query: q.Name, At: now}
	if s.err != "" {
		m.Error = s.err
		return m
	}
	v := s.value
	m.Value = &v
	return m
}

// clock is a test's time, moved on by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// analysisEnv is an env whose controller measures with m (nil: none) on
// clk; rewire makes a new controller on the same KV (a restart).
func analysisEnv(t *testing.T, m controller.Measurer, clk *clock) *env {
	e := newEnv(t)
	rewire(e, m, clk)
	return e
}

func rewire(e *env, m controller.Measurer, clk *clock) {
	log := slog.New(slog.DiscardHandler)
	d := controller.Deps{Cache: e.Cache, Store: e.KV, Log: log, Now: clk.Now,
		Defaults: config.NewStore(config.StandardDefaults(), log)}
	if m != nil {
		d.Measurer = m
	}
	e.Fn, e.Ro = controllertest.NewChain(d)
}

const canaryFirst = `steps:
- canary: 1
  bake: 30s
  analysis:
    interval: 10s
    count: 2
    queries:
    - name: error-ratio
      query: sum(rate(http_requests_total{code=~"5..",pod=~"{{.Pods}}"}[1m]))
      comparison: "<"
      threshold: 0.05
- canary: 50%
`

// webWithAnalysis creates web (4 pods on 1.0.0, one at a time) asking for
// spec, and pushes 1.1.0: the first wave's plans.
func webWithAnalysis(e *env, spec string) (events.ObjectRef, string, map[string]events.Plan) {
	e.T.Helper()
	web10, _ := e.Image("web", "1.0.0")
	_, d11 := e.Image("web", "1.1.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 4, Containers: []corev1.Container{controllertest.Container("app", web10)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2",
			analysis.AnnotationAnalysis: spec}})
	plans := controllertest.Plans(e.T, e.Handle(e.Pushed("push-11", "web", "1.1.0", d11)))
	return events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}, web10, plans
}

// succeed reports each plan succeeded and returns what follows.
func succeed(e *env, plans map[string]events.Plan) []cloudevents.Event {
	e.T.Helper()
	var outs []cloudevents.Event
	for _, p := range plans {
		outs = append(outs, e.Handle(e.Outcome(events.UpgradeSucceeded, p, ""))...)
	}
	return outs
}

// running waits until the cache shows each planned pod running its
// target digest (the kubelet restarted it), as verify's success means.
func running(e *env, plans map[string]events.Plan) {
	e.T.Helper()
	for _, p := range plans {
		digest := p.Containers[0].ToDigest
		err := world.Eventually(e.T.Context(), time.Minute, p.Pod.Name+" runs "+digest, func(context.Context) (bool, error) {
			pod, err := e.Cache.Pods.Pods(p.Pod.Namespace).Get(p.Pod.Name)
			if err != nil || len(pod.Status.ContainerStatuses) == 0 {
				return false, nil
			}
			return strings.HasSuffix(pod.Status.ContainerStatuses[0].ImageID, digest), nil
		})
		if err != nil {
			e.T.Fatal(err)
		}
	}
}

func analyze(e *env, ref events.ObjectRef) []cloudevents.Event {
	e.T.Helper()
	outs, err := e.Ro.Analyze(e.T.Context(), ref)
	if err != nil {
		e.T.Fatalf("analyze: %v", err)
	}
	return outs
}

func onlyPlan(plans map[string]events.Plan) events.Plan {
	for _, p := range plans {
		return p
	}
	return events.Plan{}
}

// A canary whose error ratio is over the threshold halts the rollout with
// the query, the value and the threshold in the reason, and its undo (an
// upgrade.requested compute-spec takes like `inplace undo`) moves the
// canary pod alone back to the recorded image; the other pods are never
// touched.
func TestFailedAnalysisHaltsAndRollsTheCanaryBack(t *testing.T) {
	clk, m := &clock{now: time.Now()}, &scripted{value: 0.1}
	e := analysisEnv(t, m, clk)
	ref, web10, plans := webWithAnalysis(e, canaryFirst)
	if len(plans) != 1 {
		t.Fatalf("first wave planned %d pods; want the one canary (max-unavailable 2)", len(plans))
	}
	canary := onlyPlan(plans)
	if outs := succeed(e, plans); len(controllertest.Plans(t, outs)) != 0 {
		t.Fatalf("the canary's success planned %v; want nothing before the analysis", shortTypes(outs))
	}
	running(e, plans)
	if outs := analyze(e, ref); len(outs) != 0 || m.calls != 0 {
		t.Fatalf("during the bake: %v, %d measurements; want none", shortTypes(outs), m.calls)
	}
	clk.Add(31 * time.Second)
	outs := analyze(e, ref)
	if got := strings.Join(shortTypes(outs), ","); got != "rollout.analysis.measured,rollout.analysis.failed,rollout.halted,service.rolledback,upgrade.requested" {
		t.Fatalf("a failing measurement emitted %s", got)
	}
	if halted, err := events.As[events.RolloutData](outs[2]); err != nil || halted.Analysis != events.AnalysisFailed {
		t.Errorf("rollout.halted says analysis %q (%v); want %s", halted.Analysis, err, events.AnalysisFailed)
	}
	var cd struct{ CustomData events.CDClusterData }
	if err := json.Unmarshal(outs[3].Data(), &cd); err != nil || cd.CustomData.Analysis == nil || cd.CustomData.Analysis.Verdict != events.AnalysisFailed {
		t.Errorf("service.rolledback customData %+v (%v); want the verdict Failed", cd.CustomData, err)
	}
	if m.canary == nil || m.canary[0] != canary.Pod.Name || len(m.canary) != 1 {
		t.Errorf("measured canary %v; want [%s]", m.canary, canary.Pod.Name)
	}
	r := e.State("Deployment", "web")
	want := `query error-ratio: 0.1, want < 0.05`
	if r.Phase != rollout.Halted || r.Reason != events.ReasonAnalysisFailed || !strings.Contains(r.Message, want) {
		t.Fatalf("rollout %s %s %q; want Halted AnalysisFailed naming %q", r.Phase, r.Reason, r.Message, want)
	}
	measured, err := events.As[events.AnalysisData](outs[0])
	if err != nil || len(measured.Measurements) != 1 || !strings.Contains(measured.Measurements[0].Expr, `pod=~"`+canary.Pod.Name+`"`) {
		t.Errorf("measured data %+v (%v); want the rendered query over the canary pod", measured, err)
	}
	back := controllertest.Plans(t, e.Handle(outs[4]))
	if len(back) != 1 || onlyPlan(back).Pod.UID != canary.Pod.UID {
		t.Fatalf("the undo planned %v; want the canary pod %s alone", back, canary.Pod.Name)
	}
	if to := onlyPlan(back).Containers[0].ToImage; !strings.HasPrefix(to, web10+"@") {
		t.Errorf("the canary goes back to %s; want %s pinned", to, web10)
	}
	e.Finish(e.Handle(e.Outcome(events.UpgradeSucceeded, onlyPlan(back), "")))
	pods, err := e.W.Client().CoreV1().Pods(e.NS).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.Containers[0].Image != web10 && !strings.HasPrefix(p.Spec.Containers[0].Image, web10+"@") {
			t.Errorf("pod %s runs %s; want %s", p.Name, p.Spec.Containers[0].Image, web10)
		}
		if _, touched := p.Annotations["inplace.dev/state"]; touched != (p.Name == canary.Pod.Name) {
			t.Errorf("pod %s touched %v; want only the canary %s touched", p.Name, touched, canary.Pod.Name)
		}
	}
}

// A canary that measures well is promoted through every step and wave.
func TestPassingAnalysisPromotesThroughEveryWave(t *testing.T) {
	clk, m := &clock{now: time.Now()}, &scripted{value: 0.01}
	e := analysisEnv(t, m, clk)
	ref, _, plans := webWithAnalysis(e, canaryFirst)
	succeed(e, plans)
	analyze(e, ref)
	clk.Add(31 * time.Second)
	if outs := analyze(e, ref); len(outs) != 1 || outs[0].Type() != events.RolloutAnalysisMeasured {
		t.Fatalf("first measurement: %v; want one measured (count 2)", shortTypes(outs))
	}
	clk.Add(10 * time.Second)
	outs := analyze(e, ref)
	next := controllertest.Plans(t, outs)
	if len(next) != 1 || shortTypes(outs)[1] != "rollout.analysis.passed" {
		t.Fatalf("second measurement: %v; want measured, passed and step 2's one more pod (50%% of 4)", shortTypes(outs))
	}
	succeed(e, next)
	outs = analyze(e, ref) // step 2: no queries, no bake
	if len(controllertest.Plans(t, outs)) != 2 {
		t.Fatalf("after step 2: %v; want the remaining 2 pods planned", shortTypes(outs))
	}
	done := e.Finish(outs)
	if done.Counts.Succeeded != 4 || done.Analysis != events.AnalysisPassed {
		t.Errorf("completed with %+v, analysis %q; want 4 pods succeeded, analysis Passed", done.Counts, done.Analysis)
	}
	r := e.State("Deployment", "web")
	if len(r.Analysis.Verdicts) != 2 || r.Analysis.Verdicts[0].Phase != analysis.Passed || len(r.Analysis.Verdicts[0].Measurements) != 2 {
		t.Errorf("verdicts %+v; want two steps passed, the first on 2 measurements", r.Analysis.Verdicts)
	}
}

// Prometheus failing (every measurement an error) is never a promotion:
// the rollout halts inconclusive; and without a Measurer at all too.
func TestInconclusiveAnalysisNeverPromotes(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    controller.Measurer
		want string
	}{
		{"erroring", &scripted{err: "connection refused"}, "connection refused"},
		{"none", nil, "--prometheus-url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{now: time.Now()}
			e := analysisEnv(t, tc.m, clk)
			ref, _, plans := webWithAnalysis(e, canaryFirst)
			succeed(e, plans)
			analyze(e, ref)
			var outs []cloudevents.Event
			for range 8 {
				clk.Add(10 * time.Second)
				outs = append(outs, analyze(e, ref)...)
			}
			if n := len(controllertest.Plans(t, outs)); n != 0 {
				t.Fatalf("planned %d pods on no data", n)
			}
			r := e.State("Deployment", "web")
			if r.Phase != rollout.Halted || r.Reason != events.ReasonAnalysisInconclusive || !strings.Contains(r.Message, tc.want) {
				t.Fatalf("rollout %s %s %q; want Halted AnalysisInconclusive naming %q", r.Phase, r.Reason, r.Message, tc.want)
			}
			if got := shortTypes(outs); got[len(got)-1] != "rollout.halted" || strings.Contains(strings.Join(got, ","), "upgrade.requested") {
				t.Errorf("emitted %v; want the halt and no undo", got)
			}
		})
	}
}

// A controller that restarts mid-analysis resumes it from the record: the
// new one's watchdog takes the second measurement and promotes.
func TestAnalysisResumesAfterARestart(t *testing.T) {
	clk, m := &clock{now: time.Now()}, &scripted{value: 0.01}
	e := analysisEnv(t, m, clk)
	ref, _, plans := webWithAnalysis(e, canaryFirst)
	succeed(e, plans)
	analyze(e, ref)
	clk.Add(31 * time.Second)
	analyze(e, ref)
	m2 := &scripted{value: 0.02}
	rewire(e, m2, clk) // a new process on the same bucket
	clk.Add(10 * time.Second)
	outs, err := e.Ro.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if m2.calls != 1 || len(controllertest.Plans(t, outs)) != 1 {
		t.Fatalf("the new controller's sweep: %d measurements, %v; want 1 and step 2's pod planned", m2.calls, shortTypes(outs))
	}
	r := e.State("Deployment", "web")
	if r.Analysis.Step != 1 || len(r.Analysis.Verdicts) != 1 || len(r.Analysis.Verdicts[0].Measurements) != 2 {
		t.Errorf("analysis %+v; want step 1, step 0 passed on both measurements", r.Analysis)
	}
}

// A spec that does not parse refuses the push, naming the field; nothing
// moves.
func TestBadAnalysisRefusesThePush(t *testing.T) {
	e := analysisEnv(t, &scripted{}, &clock{now: time.Now()})
	web10, _ := e.Image("web", "1.0.0")
	_, d11 := e.Image("web", "1.1.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web10)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", analysis.AnnotationAnalysis: "steps:\n- canary: 0\n"}})
	_, err := e.Fn.Handle(t.Context(), e.Pushed("push-11", "web", "1.1.0", d11))
	if err == nil || !strings.Contains(err.Error(), "steps[0].canary") {
		t.Fatalf("push: %v; want a refusal naming steps[0].canary", err)
	}
	if r := e.State("Deployment", "web"); r != nil {
		t.Errorf("a rollout began: %s", r.Phase)
	}
}

// A rejection of the approval step that follows a canary moves the canary
// back (the same undo as a failed analysis), and nothing else.
func TestRejectedApprovalAfterACanaryUndoesIt(t *testing.T) {
	clk := &clock{now: time.Now()}
	e := analysisEnv(t, &scripted{value: 0.01}, clk)
	ref, web10, plans := webWithAnalysis(e, "steps:\n- canary: 1\n- approval: true\n- canary: 50%\n")
	canary := onlyPlan(plans)
	succeed(e, plans)
	running(e, plans)
	analyze(e, ref)
	r := e.State("Deployment", "web")
	if r.Phase != rollout.AwaitingApproval {
		t.Fatalf("after the canary: %s; want AwaitingApproval", r.Phase)
	}
	outs := e.Handle(e.Decision(events.UpgradeRejected, "no", r.UpgradeID, ref))
	var undo []cloudevents.Event
	for _, o := range outs {
		if o.Type() == events.UpgradeRequested {
			undo = append(undo, o)
		}
	}
	if len(undo) != 1 {
		t.Fatalf("the rejection emitted %v; want one upgrade.requested (the canary's undo)", shortTypes(outs))
	}
	back := controllertest.Plans(t, e.Handle(undo[0]))
	if len(back) != 1 || onlyPlan(back).Pod.UID != canary.Pod.UID || !strings.HasPrefix(onlyPlan(back).Containers[0].ToImage, web10+"@") {
		t.Fatalf("the undo planned %v; want the canary pod %s alone, back to %s", back, canary.Pod.Name, web10)
	}
}
