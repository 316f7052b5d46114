package rollout

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

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
