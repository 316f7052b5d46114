package controller

import (
	"context"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// measure takes a measurement of each query due of r's current step,
// records them (a guarded write: dropped if the step ended meanwhile) and
// returns the record as written (nil: it moved on) with a
// rollout.analysis.measured for each.
func (ctl *Rollouts) measure(ctx context.Context, in cloudevents.Event, r *rollout.Rollout, due []string, now time.Time) (*rollout.Rollout, []cloudevents.Event, error) {
	st, _ := r.Analysis.Current()
	target, args := analysisTarget(r), r.Analysis.Spec.Args
	var ms []analysis.Measurement
	for _, name := range due {
		if q, ok := queryOf(st, name); ok {
			ms = append(ms, ctl.d.Measurer.Measure(ctx, q, args, target, now))
		}
	}
	step, started := r.Analysis.Step, r.Analysis.StepStartedAt
	w, err := ctl.changeAnalysis(ctx, r, func(cur *rollout.Rollout) bool {
		return rollout.AddMeasurements(cur, step, started, ms, now)
	})
	if err != nil || w == nil {
		return nil, nil, err
	}
	v, _ := rollout.Judge(w, now)
	var outs []cloudevents.Event
	for _, m := range ms {
		q, _ := queryOf(st, m.Query)
		ctl.d.Log.Info("analysis measured", "workload", r.Workload.String(), "upgrade", r.UpgradeID, "step", step,
			"query", m.Query, "value", deref(m.Value), "baseline", deref(m.Baseline), "error", m.Error)
		d := analysisData(w, step, v)
		d.Measurements = []events.AnalysisMeasurement{measurementData(q, args, target, m)}
		id := events.DeriveID(r.UpgradeID, events.RolloutAnalysisMeasured, fmt.Sprintf("%d/%s/%d", step, m.Query, m.At.UnixNano()))
		e, err := events.Follow(in, id, events.RolloutAnalysisMeasured, events.Source(Name), r.Workload.String(), d)
		if err != nil {
			return nil, nil, settle.Permanent(err)
		}
		e.SetExtension(events.ExtUpgradeID, r.UpgradeID)
		outs = append(outs, e)
	}
	return w, outs, nil
}

// verdictEvent is rollout.analysis.passed, or .failed (Failed or
// Inconclusive), of step of r: one per step.
func (ctl *Rollouts) verdictEvent(in cloudevents.Event, r *rollout.Rollout, step int, v analysis.Verdict) (cloudevents.Event, error) {
	typ := events.RolloutAnalysisPassed
	if v.Phase != analysis.Passed {
		typ = events.RolloutAnalysisFailed
	}
	d := analysisData(r, step, v)
	if n := len(r.Analysis.Verdicts); n > 0 && r.Analysis.Verdicts[n-1].Step == step {
		last := r.Analysis.Verdicts[n-1]
		d.CanaryPods = last.CanaryPods
		if st := r.Analysis.Spec.Steps[step]; st.Analysis != nil {
			target := analysisTarget(r)
			for _, m := range last.Measurements {
				if q, ok := queryOf(st, m.Query); ok {
					d.Measurements = append(d.Measurements, measurementData(q, r.Analysis.Spec.Args, target, m))
				}
			}
		}
	}
	e, err := events.Follow(in, events.DeriveID(r.UpgradeID, typ, fmt.Sprint(step)), typ, events.Source(Name), r.Workload.String(), d)
	if err != nil {
		return e, settle.Permanent(err)
	}
	e.SetExtension(events.ExtUpgradeID, r.UpgradeID)
	return e, nil
}

// analysisData is the data of an analysis event of r's step with verdict v.
func analysisData(r *rollout.Rollout, step int, v analysis.Verdict) events.AnalysisData {
	d := events.AnalysisData{UpgradeID: r.UpgradeID, Workload: r.Workload, Target: r.Target(), Step: step,
		Steps: len(r.Analysis.Spec.Steps), CanaryPods: r.CanaryPods(), BaselinePods: r.BaselinePods(),
		Phase: string(v.Phase), Message: v.Reason}
	switch v.Phase {
	case analysis.Failed:
		d.Reason = events.ReasonAnalysisFailed
	case analysis.Inconclusive:
		d.Reason = events.ReasonAnalysisInconclusive
	}
	return d
}

// measurementData is m of q as an event says it, with its PromQL as
// rendered for target.
func measurementData(q analysis.Query, args map[string]string, target analysis.Target, m analysis.Measurement) events.AnalysisMeasurement {
	out, _ := analysis.Judge(q, m)
	d := events.AnalysisMeasurement{Query: q.Name, Comparison: q.Comparison, Threshold: q.Threshold, At: m.At,
		Value: m.Value, Baseline: m.Baseline, Error: m.Error, Outcome: string(out)}
	d.Expr, _ = analysis.Render(q, args, target, false)
	if q.Baseline {
		d.BaselineExpr, _ = analysis.Render(q, args, target, true)
	}
	return d
}

// queryOf is the query of st named name.
func queryOf(st analysis.Step, name string) (analysis.Query, bool) {
	if st.Analysis == nil {
		return analysis.Query{}, false
	}
	for _, q := range st.Analysis.Queries {
		if q.Name == name {
			return q, true
		}
	}
	return analysis.Query{}, false
}

// analysisTarget is what r's queries are rendered for: its workload, the
// canary pods, the pods not moved yet, and the versions.
func analysisTarget(r *rollout.Rollout) analysis.Target {
	t := analysis.Target{Namespace: r.Workload.Namespace, Workload: r.Workload.Name, Kind: r.Workload.Kind,
		Canary: r.CanaryPods(), Baseline: r.BaselinePods(), Version: r.Push.Tag, Image: r.Target()}
	for _, name := range t.Canary {
		if p := r.Pods[name]; p != nil && len(p.Containers) > 0 {
			t.PreviousImage = p.Containers[0].FromImage
			if ref, err := imageref.Parse(t.PreviousImage); err == nil {
				t.PreviousVersion = ref.Tag
			}
			break
		}
	}
	return t
}

// deref is *v for a log, or nil.
func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
