package e2e_test

import (
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// analysisSpec is a canary of one pod, a bake, an error-ratio query, an
// approval, then the remaining waves.
const analysisSpec = `steps:
- canary: 1
  bake: 15s
  analysis:
    queries:
    - name: error-ratio
      query: sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}",code="500"}[30s])) / sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}"}[30s])) or vector(0)
      comparison: "<"
      threshold: 0.05
- approval: true
`

// inplace plan shows the analysis steps a push would go through, the spec
// read from the workload's annotation or the ConfigMap it names: the
// canary resolved to the workload's pods, the bake, each query rendered
// with the workload's namespace and the canary pod, its threshold, the
// approval and the remaining waves. A spec that does not parse is shown
// as its error, naming the field.
func TestPlanShowsAnalysis(t *testing.T) {
	e := newEnv(t)
	e.push("app", "1.0.0")
	_, err := e.w.Client().CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "canary", Namespace: e.ns},
		Data:       map[string]string{"steps.yaml": analysisSpec}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]string{
		"web": analysisSpec,
		"api": "configmap:canary/steps.yaml",
		"bad": strings.Replace(analysisSpec, `"<"`, `"=="`, 1),
	} {
		e.deploy(workload{name: name, replicas: 3, image: e.ref("app", "1.0.0"), annotations: map[string]string{
			"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1", "inplace.dev/analysis": spec}})
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"web", []string{"analysis (annotation inplace.dev/analysis), 2 step(s) before the remaining waves:",
			"step 1: canary 1: 1 of 3 pod(s) on the new version", "bake 15s", "query error-ratio: want < 0.05",
			`code="500"}[30s])) / sum(rate(http_requests_total{namespace="` + e.ns + `",pod=~"`,
			"step 2: approval: waits for inplace approve UPGRADE", "then 2 wave(s):", "wave 2: "}},
		{"api", []string{"analysis (configmap:canary/steps.yaml), 2 step(s)", "query error-ratio: want < 0.05"}},
		{"bad", []string{`analysis (annotation inplace.dev/analysis): analysis spec: steps[0].analysis.queries[0].comparison: want <, <=, > or >=, got "=="`}},
	} {
		out, err := e.inplace("plan", "deploy/"+tc.name, "-n", e.ns, "--image", e.ref("app", "1.1.0"),
			"--kubeconfig", e.w.Cluster.Kubeconfig())
		if err != nil {
			t.Fatalf("plan %s: %v\n%s", tc.name, err, out)
		}
		for _, s := range tc.want {
			if !strings.Contains(out, s) {
				t.Errorf("plan %s lacks %q:\n%s", tc.name, s, out)
			}
		}
		if tc.name != "web" {
			continue
		}
		// The canary is one of the pods, the query names it alone.
		var pods []string
		for p := range e.pods("web") {
			pods = append(pods, p)
		}
		sort.Strings(pods)
		canary := 0
		for _, p := range pods {
			if strings.Contains(out, `pod=~"`+p+`"`) {
				canary++
			}
		}
		if canary != 1 {
			t.Errorf("want the query over exactly one of %v:\n%s", pods, out)
		}
	}
}
