package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

const errorRatio = `steps:
- canary: 25%
  bake: 20s
  analysis:
    interval: 10s
    count: 2
    queries:
    - name: errors
      query: sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}",code="500"}[30s])) or vector(0)
      comparison: "<"
      threshold: 0.05
    - name: latency
      query: max(up{pod=~"{{.Pods}}",version="{{.Version}}"})
      comparison: "<="
      threshold: 0.1
      baseline: true
- approval: true
- canary: 3
`

func wavesOf(names ...[]string) [][]*rollout.Pod {
	var out [][]*rollout.Pod
	for _, wave := range names {
		var pods []*rollout.Pod
		for _, n := range wave {
			pods = append(pods, &rollout.Pod{Name: n, Node: "node-1", Containers: []events.ContainerPlan{
				{Name: "app", FromImage: "registry.example/shop/web:1.0.0", ToImage: "registry.example/shop/web:1.1.0"}}})
		}
		out = append(out, pods)
	}
	return out
}

func names(pods []*rollout.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// The steps take the pods in the order of the waves: a canary of 25% of 4
// replicas moves 1, then an approval, then a canary of 3 moves 2 more; the
// last pod is the remaining wave. Each query is rendered over the pods on
// the new version (and, for a baseline query, those not yet moved).
func TestPlanSteps(t *testing.T) {
	spec, err := analysis.Parse(errorRatio)
	if err != nil {
		t.Fatal(err)
	}
	w := kube.Workload{Ref: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}, Replicas: 4}
	a := planSteps(spec, w, wavesOf([]string{"web-a", "web-b"}, []string{"web-c", "web-d"}))

	type step struct {
		Approval bool
		Pods     int
		Move     []string
		Bake     string
		Queries  []queryPlan
	}
	var got []step
	for _, st := range a.Steps {
		got = append(got, step{st.Approval, st.Pods, names(st.Move), st.Bake, st.Queries})
	}
	want := []step{
		{Pods: 1, Move: []string{"web-a"}, Bake: "20s", Queries: []queryPlan{
			{Name: "errors", Comparison: "<", Threshold: 0.05,
				Query: `sum(rate(http_requests_total{namespace="shop",pod=~"web-a",code="500"}[30s])) or vector(0)`},
			{Name: "latency", Comparison: "<=", Threshold: 0.1,
				Query:    `max(up{pod=~"web-a",version="1.1.0"})`,
				Baseline: `max(up{pod=~"web-b|web-c|web-d",version="1.1.0"})`},
		}},
		{Approval: true},
		{Pods: 3, Move: []string{"web-b", "web-c"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	var rest [][]string
	for _, wave := range a.Remaining {
		rest = append(rest, names(wave))
	}
	if diff := cmp.Diff([][]string{{"web-d"}}, rest); diff != "" {
		t.Errorf("remaining waves (-want +got):\n%s", diff)
	}
}

// The printed plan says each step, the queries with their thresholds and
// the waves after them; a spec that does not parse is its error, naming
// the field.
func TestPrintPlanAnalysis(t *testing.T) {
	spec, err := analysis.Parse(errorRatio)
	if err != nil {
		t.Fatal(err)
	}
	w := kube.Workload{Ref: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}, Replicas: 4}
	waves := wavesOf([]string{"web-a", "web-b"}, []string{"web-c", "web-d"})
	a := planSteps(spec, w, waves)
	a.From = "annotation inplace.dev/analysis"
	_, bad := analysis.Parse(strings.Replace(errorRatio, `"<="`, `"=="`, 1))
	for _, tc := range []struct {
		name string
		plan *analysisPlan
		want []string
	}{
		{"steps", &a, []string{
			"  analysis (annotation inplace.dev/analysis), 3 step(s) before the remaining waves:\n",
			"    step 1: canary 25%: 1 of 4 pod(s) on the new version\n" +
				"      moves web-a on node-1 (app registry.example/shop/web:1.0.0 → registry.example/shop/web:1.1.0)\n" +
				"      bake 20s\n" +
				"      measure 2 time(s) every 10s, 0 failure(s) and 2 inconclusive in a row tolerated\n" +
				"      query errors: want < 0.05\n" +
				`        sum(rate(http_requests_total{namespace="shop",pod=~"web-a",code="500"}[30s])) or vector(0)` + "\n",
			`        minus the baseline: max(up{pod=~"web-b|web-c|web-d",version="1.1.0"})` + "\n",
			"    step 2: approval: waits for inplace approve UPGRADE\n",
			"    step 3: canary 3: 3 of 4 pod(s) on the new version\n      moves web-b on node-1",
			"    then 1 wave(s):\n    wave 1: web-d on node-1",
		}},
		{"invalid", &analysisPlan{From: "configmap:web-analysis/analysis.yaml", Error: bad.Error()}, []string{
			"  analysis (configmap:web-analysis/analysis.yaml): analysis spec: steps[0].analysis.queries[1].comparison: want <, <=, > or >=, got \"==\"\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			p := workloadPlan{Analysis: tc.plan}
			p.Workload, p.Waves, p.Budget, p.BudgetFrom = w.Ref, waves, 2, "test"
			printPlans(&b, events.ImagePushedData{}, []workloadPlan{p})
			for _, s := range tc.want {
				if !strings.Contains(b.String(), s) {
					t.Errorf("the plan lacks\n%s\nin\n%s", s, b.String())
				}
			}
			if tc.plan.Error != "" && strings.Contains(b.String(), "wave 1") {
				t.Errorf("an invalid spec shows waves:\n%s", b.String())
			}
		})
	}
}
