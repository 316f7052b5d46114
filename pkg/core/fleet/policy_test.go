package fleet

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	got, err := Parse(`
workloads: [Deployment/shop/web]
stages:
- name: staging
  clusters: [staging]
- name: prod
  clusters: [prod-eu, prod-us]
  approval: true
  analysis: true
`)
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{Workloads: []string{"Deployment/shop/web"}, Stages: []Stage{
		{Name: "staging", Clusters: []string{"staging"}},
		{Name: "prod", Clusters: []string{"prod-eu", "prod-us"}, Approval: true, Analysis: true},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if _, err := Parse(`{"workloads":["Pod/a/b"],"stages":[{"name":"s","clusters":["c"]}]}`); err != nil {
		t.Errorf("JSON: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	const w = "workloads: [Deployment/shop/web]\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"no workloads", "stages: [{name: s, clusters: [c]}]", "workloads: want at least one"},
		{"bad workload", "workloads: [shop/web]\nstages: [{name: s, clusters: [c]}]", "workloads[0]: want <kind>"},
		{"bad kind", "workloads: [Job/shop/web]\nstages: [{name: s, clusters: [c]}]", "workloads[0]: kind"},
		{"no stages", w, "stages: want at least one stage"},
		{"unknown field", w + "stages: [{name: s, clusters: [c], aproval: true}]", `unknown field "aproval"`},
		{"stage name", w + "stages: [{name: Staging, clusters: [c]}]", "stages[0].name: want lower-case"},
		{"stage twice", w + "stages: [{name: s, clusters: [a]}, {name: s, clusters: [b]}]", `stages[1].name: stage "s" twice`},
		{"no clusters", w + "stages: [{name: s}]", "stages[0].clusters: want at least one"},
		{"cluster name", w + "stages: [{name: s, clusters: [a.b]}]", "stages[0].clusters[0]: want lower-case"},
		{"cluster twice", w + "stages: [{name: s, clusters: [a]}, {name: t, clusters: [b, a]}]",
			`stages[1].clusters[1]: cluster "a" is already in stage "s"`},
		{"too big", w + strings.Repeat("#", MaxPolicyBytes), "more than 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
