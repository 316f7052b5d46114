package analysis

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// AnnotationAnalysis names a workload's canary analysis: either the spec
// itself (YAML or JSON: steps of a canary, a bake and PromQL queries, or an
// approval), or "configmap:<name>" (optionally "configmap:<name>/<key>")
// naming a ConfigMap in the workload's namespace whose key (default
// analysis.yaml) holds it. Parsed and checked by pkg/core/analysis; the
// rollout does not run the steps yet.
const AnnotationAnalysis = "inplace.dev/analysis"

// DefaultKey is the ConfigMap key a spec is read from when the annotation
// names none.
const DefaultKey = "analysis.yaml"

// Source is where a workload's spec is: Inline, or a ConfigMap's key.
type Source struct {
	Inline    string
	ConfigMap string
	Key       string
}

// FromAnnotations finds the spec a workload's annotations point at; ok is
// false when the workload asks for no analysis.
func FromAnnotations(ann map[string]string) (src Source, ok bool, err error) {
	v, ok := ann[AnnotationAnalysis]
	if !ok {
		return Source{}, false, nil
	}
	v = strings.TrimSpace(v)
	ref, isRef := strings.CutPrefix(v, "configmap:")
	if !isRef {
		if v == "" {
			return Source{}, true, fmt.Errorf("annotation %s: empty: want a spec or configmap:<name>", AnnotationAnalysis)
		}
		return Source{Inline: v}, true, nil
	}
	name, key, hasKey := strings.Cut(strings.TrimSpace(ref), "/")
	if !hasKey {
		key = DefaultKey
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return Source{}, true, fmt.Errorf("annotation %s: ConfigMap name %q: %s", AnnotationAnalysis, name, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return Source{}, true, fmt.Errorf("annotation %s: ConfigMap key %q: %s", AnnotationAnalysis, key, strings.Join(errs, "; "))
	}
	return Source{ConfigMap: name, Key: key}, true, nil
}
