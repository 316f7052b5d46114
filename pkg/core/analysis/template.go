package analysis

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Vars is what a query's template may use, as Argo Rollouts' analysis
// arguments are: {{.Namespace}}, {{.Workload}}, {{.Kind}}, {{.Pods}} (a
// regular expression matching exactly the pods measured, for
// pod=~"{{.Pods}}"), {{.CanaryPods}} and {{.BaselinePods}} (the same for
// either side, whichever is measured), {{.Version}} and
// {{.PreviousVersion}} (the tags), {{.Image}} and {{.PreviousImage}}, and
// {{.Args.name}} from the spec's args.
type Vars struct {
	Namespace, Workload, Kind      string
	Pods, CanaryPods, BaselinePods string
	Version, PreviousVersion       string
	Image, PreviousImage           string
	Args                           map[string]string
}

// Target is the rollout a query is rendered for.
type Target struct {
	Namespace, Workload, Kind string
	// Canary are the pods on the new version, Baseline those not yet moved.
	Canary, Baseline         []string
	Version, PreviousVersion string
	Image, PreviousImage     string
}

// Render is q's PromQL for target, over the canary pods or, with
// baseline, over the baseline pods. Every name is checked (a namespace,
// workload or pod that is no DNS name is refused: it would not be matched
// literally), so nothing from the cluster can change the query's shape.
func Render(q Query, args map[string]string, t Target, baseline bool) (string, error) {
	v, err := t.vars(args)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", q.Name, err)
	}
	v.Pods = v.CanaryPods
	if baseline {
		v.Pods = v.BaselinePods
	}
	out, err := render(q.Query, v)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", q.Name, err)
	}
	return out, nil
}

func (t Target) vars(args map[string]string) (Vars, error) {
	for _, n := range []string{t.Namespace, t.Workload} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return Vars{}, fmt.Errorf("name %q: %s", n, strings.Join(errs, "; "))
		}
	}
	canary, err := podsRegexp(t.Canary)
	if err != nil {
		return Vars{}, err
	}
	base, err := podsRegexp(t.Baseline)
	if err != nil {
		return Vars{}, err
	}
	for _, s := range []string{t.Kind, t.Version, t.PreviousVersion, t.Image, t.PreviousImage} {
		if strings.ContainsAny(s, "\"\\\n{}") {
			return Vars{}, fmt.Errorf("value %q: quotes, backslashes, braces and newlines are not allowed", s)
		}
	}
	return Vars{
		Namespace: t.Namespace, Workload: t.Workload, Kind: t.Kind,
		CanaryPods: canary, BaselinePods: base,
		Version: t.Version, PreviousVersion: t.PreviousVersion,
		Image: t.Image, PreviousImage: t.PreviousImage,
		Args: args,
	}, nil
}

// podsRegexp is a regular expression matching exactly the names, written
// for a PromQL double-quoted string (a dot is \\. there). No pods match
// nothing: an empty alternation would match every series without a pod.
func podsRegexp(names []string) (string, error) {
	if len(names) == 0 {
		return "$^", nil
	}
	sorted := slices.Sorted(slices.Values(names))
	parts := make([]string, 0, len(sorted))
	for _, n := range slices.Compact(sorted) {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return "", fmt.Errorf("pod %q: %s", n, strings.Join(errs, "; "))
		}
		parts = append(parts, strings.ReplaceAll(n, ".", `\\.`))
	}
	return strings.Join(parts, "|"), nil
}

func render(text string, v Vars) (string, error) {
	tpl, err := template.New("query").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := tpl.Execute(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// sampleVars fill a template at parse time, so a field that does not
// exist is refused then, not at the first measurement.
func sampleVars(args map[string]string) Vars {
	return Vars{
		Namespace: "ns", Workload: "web", Kind: "Deployment",
		Pods: "web-1", CanaryPods: "web-1", BaselinePods: "web-2",
		Version: "1.1.0", PreviousVersion: "1.0.0",
		Image: "registry/web:1.1.0", PreviousImage: "registry/web:1.0.0",
		Args: args,
	}
}
