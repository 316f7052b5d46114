package analysis

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const errorRatio = `sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}",code=~"5.."}[1m]))
  / sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}"}[1m]))`

func TestParse(t *testing.T) {
	one, half := intstr.FromInt32(1), intstr.FromString("50%")
	zero := 0
	full := `
args: {job: web}
steps:
- canary: 1
  bake: 1m
  analysis:
    count: 3
    interval: 10s
    failureLimit: 1
    errorLimit: 0
    queries:
    - name: error-ratio
      query: '` + strings.ReplaceAll(errorRatio, "\n", " ") + `'
      comparison: "<"
      threshold: 0.05
      baseline: true
    - name: up
      query: 'min(up{job="{{.Args.job}}"})'
      comparison: ">="
      threshold: 1
- approval: true
- canary: 50%
`
	want := Spec{
		Args: map[string]string{"job": "web"},
		Steps: []Step{
			{Canary: &one, Bake: "1m", Analysis: &Analysis{
				Count: 3, Interval: "10s", FailureLimit: 1, ErrorLimit: &zero,
				Queries: []Query{
					{Name: "error-ratio", Query: strings.ReplaceAll(errorRatio, "\n", " "), Comparison: "<", Threshold: 0.05, Baseline: true},
					{Name: "up", Query: `min(up{job="{{.Args.job}}"})`, Comparison: ">=", Threshold: 1},
				},
			}},
			{Approval: true},
			{Canary: &half},
		},
	}
	got, err := Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse (-want +got):\n%s", d)
	}
	j, err := Parse(`{"steps":[{"canary":"25%","bake":"30s"}]}`)
	if err != nil || j.Steps[0].Bake.D().Seconds() != 30 {
		t.Errorf("JSON spec: %+v, %v", j, err)
	}
}

func TestParseRefusesNamingTheField(t *testing.T) {
	q := func(extra string) string {
		return `{"steps":[{"canary":1,"analysis":{"queries":[{"name":"q","query":"up","comparison":"<","threshold":1` + extra + `}]}}]}`
	}
	for _, tc := range []struct{ name, spec, want string }{
		{"empty", `{}`, "steps: want at least one step"},
		{"not yaml", `steps: [`, "analysis spec:"},
		{"unknown field", `{"steps":[{"canary":1,"bakee":"1m"}]}`, `unknown field "bakee"`},
		{"wrong type", `{"steps":[{"canary":1,"analysis":{"count":"three","queries":[]}}]}`, "count"},
		{"no canary", `{"steps":[{"bake":"1m"}]}`, "steps[0].canary: want a number of pods or a percent"},
		{"zero canary", `{"steps":[{"canary":0}]}`, "steps[0].canary: want at least 1 pod"},
		{"bad percent", `{"steps":[{"canary":"150%"}]}`, "steps[0].canary: want a number or a percent"},
		{"word canary", `{"steps":[{"canary":"half"}]}`, "steps[0].canary"},
		{"approval with canary", `{"steps":[{"canary":1},{"approval":true,"canary":1}]}`, "steps[1].approval: an approval step has no canary"},
		{"bad bake", `{"steps":[{"canary":1,"bake":"soon"}]}`, `steps[0].bake: want a duration such as "30s", got "soon"`},
		{"negative bake", `{"steps":[{"canary":1,"bake":"-1s"}]}`, "steps[0].bake"},
		{"no queries", `{"steps":[{"canary":1,"analysis":{}}]}`, "steps[0].analysis.queries: want at least one query"},
		{"zero interval", strings.Replace(q(""), `"queries"`, `"interval":"0s","queries"`, 1), "steps[0].analysis.interval: want more than 0"},
		{"negative count", strings.Replace(q(""), `"queries"`, `"count":-1,"queries"`, 1), "steps[0].analysis.count"},
		{"negative failures", strings.Replace(q(""), `"queries"`, `"failureLimit":-1,"queries"`, 1), "steps[0].analysis.failureLimit"},
		{"negative errors", strings.Replace(q(""), `"queries"`, `"errorLimit":-1,"queries"`, 1), "steps[0].analysis.errorLimit"},
		{"bad deadline", strings.Replace(q(""), `"queries"`, `"deadline":"x","queries"`, 1), "steps[0].analysis.deadline"},
		{"bad comparison", strings.Replace(q(""), `"<"`, `"=="`, 1), `steps[0].analysis.queries[0].comparison: want <, <=, > or >=, got "=="`},
		{"no name", strings.Replace(q(""), `"name":"q"`, `"name":""`, 1), "steps[0].analysis.queries[0].name"},
		{"no query", strings.Replace(q(""), `"query":"up"`, `"query":""`, 1), "steps[0].analysis.queries[0].query: want a PromQL"},
		{"unknown var", strings.Replace(q(""), `"query":"up"`, `"query":"up{pod=~\"{{.Podz}}\"}"`, 1), "steps[0].analysis.queries[0].query:"},
		{"unknown arg", strings.Replace(q(""), `"query":"up"`, `"query":"up{job=\"{{.Args.job}}\"}"`, 1), `steps[0].analysis.queries[0].query:`},
		{"bad template", strings.Replace(q(""), `"query":"up"`, `"query":"up{{"`, 1), "steps[0].analysis.queries[0].query:"},
		{"twice", strings.Replace(q(""), `}]}}]}`, `},{"name":"q","query":"up","comparison":"<","threshold":1}]}}]}`, 1), `steps[0].analysis.queries[1].name: "q" twice`},
		{"bad arg", `{"args":{"a-b":"x"},"steps":[{"canary":1}]}`, "args.a-b"},
		{"too big", `{"steps":[{"canary":1}]}` + strings.Repeat(" ", MaxSpecBytes), "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestFromAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		value   *string
		want    Source
		wantOK  bool
		wantErr string
	}{
		{name: "absent"},
		{name: "inline", value: ptr("steps: [{canary: 1}]"), want: Source{Inline: "steps: [{canary: 1}]"}, wantOK: true},
		{name: "configmap", value: ptr("configmap:web-analysis"), want: Source{ConfigMap: "web-analysis", Key: DefaultKey}, wantOK: true},
		{name: "configmap key", value: ptr(" configmap:web-analysis/canary.yaml "), want: Source{ConfigMap: "web-analysis", Key: "canary.yaml"}, wantOK: true},
		{name: "empty", value: ptr(" "), wantOK: true, wantErr: "empty"},
		{name: "bad name", value: ptr("configmap:Web_Analysis"), wantOK: true, wantErr: `ConfigMap name "Web_Analysis"`},
		{name: "bad key", value: ptr("configmap:web/a b"), wantOK: true, wantErr: `ConfigMap key "a b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ann := map[string]string{"inplace.dev/policy": "semver:minor"}
			if tc.value != nil {
				ann[AnnotationAnalysis] = *tc.value
			}
			got, ok, err := FromAnnotations(ann)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), AnnotationAnalysis) {
					t.Fatalf("got %v, want an error naming %s and %q", err, AnnotationAnalysis, tc.wantErr)
				}
				return
			}
			if err != nil || ok != tc.wantOK {
				t.Fatalf("ok %v err %v, want ok %v", ok, err, tc.wantOK)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestCanaryPods(t *testing.T) {
	for _, tc := range []struct {
		canary   *intstr.IntOrString
		replicas int
		want     int
	}{
		{ptr(intstr.FromInt32(1)), 10, 1},
		{ptr(intstr.FromInt32(3)), 2, 2},
		{ptr(intstr.FromString("10%")), 10, 1},
		{ptr(intstr.FromString("10%")), 4, 1},
		{ptr(intstr.FromString("25%")), 10, 3},
		{ptr(intstr.FromString("100%")), 7, 7},
		{ptr(intstr.FromString("1%")), 1, 1},
		{ptr(intstr.FromInt32(1)), 0, 0},
		{nil, 10, 0},
	} {
		if got := (Step{Canary: tc.canary}).CanaryPods(tc.replicas); got != tc.want {
			t.Errorf("CanaryPods(%v of %d) = %d, want %d", tc.canary, tc.replicas, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
