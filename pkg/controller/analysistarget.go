package controller

import (
	"errors"
	"fmt"

	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// analysisOf is the canary analysis w's inplace.dev/analysis asks for
// (nil: none), where it comes from, or why it cannot be read: a spec that
// does not parse (the error names the field), or one in a ConfigMap: the
// process reads no ConfigMap contents (its one ConfigMap informer, the
// config-change watcher's, keeps only a hash of the data), so such a push
// is refused with that reason.
func analysisOf(w kube.Workload) (*analysis.Spec, analysis.Source, error) {
	src, ok, err := analysis.FromAnnotations(w.Meta.Annotations)
	if !ok || err != nil {
		return nil, src, err
	}
	if src.ConfigMap != "" {
		return nil, src, fmt.Errorf("annotation %s: ConfigMap %s: %w", analysis.AnnotationAnalysis, src.ConfigMap, errConfigMapUnread)
	}
	spec, err := analysis.Parse(src.Inline)
	if err != nil {
		return nil, src, fmt.Errorf("annotation %s: %w", analysis.AnnotationAnalysis, err)
	}
	return &spec, src, nil
}

// errConfigMapUnread: the spec is in a ConfigMap, which this process does
// not read.
var errConfigMapUnread = errors.New("not read: this process reads no ConfigMaps")

// RolloutAnalysis is the analysis a rollout of t begins with (nil: none).
func (t Target) RolloutAnalysis() *rollout.Analysis {
	if t.Analysis == nil {
		return nil
	}
	from := "annotation"
	if t.AnalysisFrom.ConfigMap != "" {
		from = "configmap:" + t.AnalysisFrom.ConfigMap + "/" + t.AnalysisFrom.Key
	}
	return &rollout.Analysis{Spec: *t.Analysis, Source: from}
}
