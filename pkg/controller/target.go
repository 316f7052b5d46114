package controller

import (
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Target is a workload that runs a container from the pushed repository,
// with its opt-in, or why the push leaves it alone.
type Target struct {
	Workload kube.Workload
	Options  policy.Options
	// Skip says why nothing will happen ("not opted in", a bad annotation).
	Skip string
	// Budget is how many pods may be out at once; BudgetFrom says where it
	// comes from.
	Budget     int
	BudgetFrom string
	// TemplateReference is the workload's template reference style.
	TemplateReference string
	// Analysis is the workload's canary analysis (inplace.dev/analysis),
	// parsed; AnalysisFrom where it is; AnalysisErr why it cannot be
	// used (the rollout is refused: never rolled out without it).
	Analysis     *analysis.Spec
	AnalysisFrom analysis.Source
	AnalysisErr  error
}

// TargetOf is w with its opt-in read from its annotations under d.
func TargetOf(w kube.Workload, d config.Defaults) Target {
	t := Target{Workload: w}
	opts, err := policy.FromAnnotations(w.Meta.Annotations, d.Policy)
	switch {
	case err != nil:
		t.Skip = err.Error()
	case !opts.OptedIn:
		t.Skip = "not opted in (no " + policy.AnnotationPolicy + " annotation)"
	case opts.Paused:
		t.Skip = "paused (" + policy.AnnotationPaused + ")"
	}
	t.Options = opts
	t.Budget, t.BudgetFrom = budget(w, opts)
	ref, rerr := policy.TemplateReference(w.Meta.Annotations, d.TemplateReference)
	if rerr != nil && t.Skip == "" && opts.OptedIn {
		t.Skip = rerr.Error()
	}
	t.TemplateReference = ref
	t.Analysis, t.AnalysisFrom, t.AnalysisErr = analysisOf(w)
	return t
}

// Undoing gives the target of an undo push the undo policy: back to what
// the pods ran before, whatever the workload's policy allows going
// forward. Whether the push is a true undo is checked against the record
// (checkUndo) before it starts a rollout; the rollout's later waves are
// planned under the same policy.
func (t Target) Undoing(push events.UpgradeRequestData) Target {
	if push.Undo != "" && t.Options.OptedIn {
		t.Options.Policy = policy.UndoPolicy()
		t.Analysis, t.AnalysisErr = nil, nil // an undo goes back without a canary
	}
	return t
}

// budget is how many pods may be out at once, and where that comes from:
// the workload's inplace.dev/max-unavailable, else its own rolling-update
// maxUnavailable (resolved as its controller does), else config-inplace's
// max-unavailable (a Deployment with Recreate, OnDelete, a ReplicaSet, a
// bare pod).
func budget(w kube.Workload, o policy.Options) (int, string) {
	if v, ok := w.Meta.Annotations[policy.AnnotationMaxUnavailable]; ok {
		return o.Budget(w.Replicas), policy.AnnotationMaxUnavailable + ": " + v
	}
	if ru := w.RollingUpdate; ru != nil {
		return ru.Resolve(w.Replicas), ru.String()
	}
	return o.Budget(w.Replicas), "config-inplace max-unavailable: " + o.MaxUnavailable.String()
}

// RolloutOptions are a target's settings for its rollout.
func (t Target) RolloutOptions() rollout.Options {
	return rollout.Options{
		Budget:            t.Budget,
		GraceSeconds:      t.Options.GraceSeconds,
		Prepull:           t.Options.Prepull,
		VerifySeconds:     t.Options.VerifySeconds,
		MinReadySeconds:   t.Workload.MinReadySeconds,
		OrderByOrdinal:    t.Workload.Ref.Kind == "StatefulSet",
		TemplateReference: t.TemplateReference,
	}
}
