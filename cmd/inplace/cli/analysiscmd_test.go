package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

func f64(v float64) *float64 { return &v }

// analysisEvent is a rollout.analysis event of web's upgrade.
func analysisEvent(t *testing.T, upgradeID, typ string, d events.AnalysisData, at time.Time) cloudevents.Event {
	t.Helper()
	d.UpgradeID, d.Workload, d.Target, d.Steps = upgradeID, events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		"registry.example/shop/web:1.3.0", 1
	ev, err := events.New(events.DeriveID(upgradeID, typ, at.String()), typ, events.Source("compute-spec"), d.Workload.String(), d)
	if err != nil {
		t.Fatal(err)
	}
	ev.SetTime(at)
	ev.SetExtension(events.ExtUpgradeID, upgradeID)
	return ev
}

// inplace trace shows each analysis event with the query, the value, the
// threshold and the verdict.
func TestTraceShowsAnalysis(t *testing.T) {
	w := newToolWorld(t)
	web := rolloutFor("web", "1.3.0", false)
	evs := chain(t, web)
	at := web.Start.Add(time.Second)
	m := events.AnalysisMeasurement{Query: "error-ratio", Expr: `sum(rate(x{pod=~"web-0"}[10s]))`, Comparison: "<", Threshold: 0.05,
		At: at, Value: f64(0.1), Outcome: "Failure"}
	evs = append(evs,
		analysisEvent(t, web.UpgradeID(), events.RolloutAnalysisMeasured, events.AnalysisData{Phase: "Running",
			CanaryPods: []string{"web-0"}, Measurements: []events.AnalysisMeasurement{m}}, at),
		analysisEvent(t, web.UpgradeID(), events.RolloutAnalysisFailed, events.AnalysisData{Phase: "Failed",
			Reason: events.ReasonAnalysisFailed, Message: "query error-ratio: 0.1, want < 0.05 (1 failed, 0 tolerated)",
			Measurements: []events.AnalysisMeasurement{m}}, at.Add(time.Millisecond)))
	w.publish(t, evs)
	out, _, err := w.run(t.Context(), t, "", "trace", web.UpgradeID())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rollout.analysis.measured",
		"step 1/1 Running (canary web-0); error-ratio 0.1 (want < 0.05) Failure",
		"rollout.analysis.failed",
		"step 1/1 Failed AnalysisFailed: query error-ratio: 0.1, want < 0.05 (1 failed, 0 tolerated); error-ratio 0.1 (want < 0.05) Failure",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}
}

// inplace status shows, under the table, where each rollout's analysis
// stands: the step, its verdict or Running, and each measurement with its
// query, value, threshold and outcome (a failed one with its error).
func TestStatusShowsAnalysis(t *testing.T) {
	w := newToolWorld(t)
	spec, err := analysis.Parse(`{"steps":[{"canary":1,"bake":"15s","analysis":{"count":2,"queries":[
  {"name":"error-ratio","query":"sum(x)","comparison":"<","threshold":0.05}]}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	at := time.Date(2026, 11, 27, 12, 0, 1, 0, time.UTC)
	putRollout(t, w, "web", rollout.Running, now, rollout.Succeeded, rollout.Pending)
	putRollout(t, w, "cart", rollout.Halted, now, rollout.Succeeded, rollout.Pending)
	setAnalysis(t, w, "web", &rollout.Analysis{Spec: spec, StepStartedAt: at.Add(-15 * time.Second),
		Measurements: []analysis.Measurement{{Query: "error-ratio", At: at, Value: f64(0.01)},
			{Query: "error-ratio", At: at.Add(30 * time.Second), Error: "connection refused"}}})
	setAnalysis(t, w, "cart", &rollout.Analysis{Spec: spec, Verdicts: []rollout.StepVerdict{{Phase: analysis.Failed,
		Reason: "query error-ratio: 0.1, want < 0.05", Measurements: []analysis.Measurement{{Query: "error-ratio", At: at, Value: f64(0.1)}}}}})
	out, _, err := w.run(t.Context(), t, "", "status")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Deployment/shop/web analysis step 1/1 Running: started 11:59:46\n" +
			"  12:00:01  error-ratio 0.01 (want < 0.05) Success\n" +
			"  12:00:31  error-ratio: connection refused (want < 0.05) Inconclusive\n",
		"Deployment/shop/cart analysis step 1/1 Failed: query error-ratio: 0.1, want < 0.05\n" +
			"  12:00:01  error-ratio 0.1 (want < 0.05) Failure\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks\n%s\nin\n%s", want, out)
		}
	}
}

// setAnalysis sets the analysis of name's rollout record.
func setAnalysis(t *testing.T, w *toolWorld, name string, a *rollout.Analysis) {
	t.Helper()
	kv, err := w.bus.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	key := rollout.Key(events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: name})
	if _, err := kv.Update(t.Context(), key, func(old []byte) ([]byte, error) {
		var r rollout.Rollout
		if err := json.Unmarshal(old, &r); err != nil {
			return nil, err
		}
		r.Analysis = a
		return json.Marshal(r)
	}); err != nil {
		t.Fatal(err)
	}
}
