package history

import (
	"fmt"
	"io"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// AnalysisSummary is where a rollout's canary analysis stands: the step,
// its phase (the verdict of a step that ended, else Running) and why, and
// the step's measurements with their queries' thresholds and outcomes.
type AnalysisSummary struct {
	Step         int                          `json:"step"`
	Steps        int                          `json:"steps"`
	Phase        string                       `json:"phase"`
	Reason       string                       `json:"reason,omitempty"`
	Measurements []events.AnalysisMeasurement `json:"measurements,omitempty"`
}

// summarizeAnalysis is a's summary; nil without analysis.
func summarizeAnalysis(a *rollout.Analysis) *AnalysisSummary {
	if a == nil {
		return nil
	}
	s := &AnalysisSummary{Step: a.Step + 1, Steps: len(a.Spec.Steps), Phase: string(analysis.Running)}
	ms := a.Measurements
	if n := len(a.Verdicts); n > 0 && (a.Verdicts[n-1].Step == a.Step || a.Done()) {
		v := a.Verdicts[n-1]
		s.Step, s.Phase, s.Reason, ms = v.Step+1, string(v.Phase), v.Reason, v.Measurements
	} else {
		switch {
		case a.Done():
		case a.StepStartedAt.IsZero():
			s.Reason = "the canary pods are moving"
		default:
			s.Reason = fmt.Sprintf("started %s", a.StepStartedAt.UTC().Format("15:04:05"))
		}
	}
	var queries []analysis.Query
	if s.Step-1 < len(a.Spec.Steps) {
		if an := a.Spec.Steps[s.Step-1].Analysis; an != nil {
			queries = an.Queries
		}
	}
	for _, m := range ms {
		s.Measurements = append(s.Measurements, measurementOf(queries, m))
	}
	return s
}

func measurementOf(queries []analysis.Query, m analysis.Measurement) events.AnalysisMeasurement {
	out := events.AnalysisMeasurement{Query: m.Query, At: m.At, Value: m.Value, Baseline: m.Baseline, Error: m.Error}
	for _, q := range queries {
		if q.Name == m.Query {
			o, _ := analysis.Judge(q, m)
			out.Comparison, out.Threshold, out.Outcome = q.Comparison, q.Threshold, string(o)
		}
	}
	return out
}

// writeAnalyses prints, under the status table, the analysis of each
// rollout that has one: its step and phase, then each measurement.
func writeAnalyses(w io.Writer, rows []Summary) {
	for _, s := range rows {
		a := s.Analysis
		if a == nil {
			continue
		}
		line := fmt.Sprintf("\n%s analysis step %d/%d %s", s.Workload, a.Step, a.Steps, a.Phase)
		if a.Reason != "" {
			line += ": " + a.Reason
		}
		fmt.Fprintln(w, line)
		for _, m := range a.Measurements {
			fmt.Fprintf(w, "  %s  %s\n", m.At.UTC().Format("15:04:05"), MeasurementSummary(m))
		}
	}
}
