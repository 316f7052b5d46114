package history

import (
	"fmt"
	"strings"

	"github.com/inplace-dev/inplace/events"
)

// analysisDetail summarises a rollout.analysis event: the step, its phase
// (with the reason and message of a verdict) and each measurement with its
// query, value, threshold and outcome.
func analysisDetail(d events.AnalysisData) string {
	s := fmt.Sprintf("step %d/%d %s", d.Step+1, max(d.Steps, 1), d.Phase)
	if d.Reason != "" {
		s += " " + d.Reason
	}
	if d.Message != "" {
		s += ": " + d.Message
	}
	if len(d.CanaryPods) > 0 {
		s += " (canary " + strings.Join(d.CanaryPods, ", ") + ")"
	}
	for _, m := range d.Measurements {
		s += "; " + MeasurementSummary(m)
	}
	return s
}

// MeasurementSummary is one measurement in words: "error-ratio 0.1 (want
// < 0.05) Failure", with the baseline it was measured against, or the
// error that made it inconclusive.
func MeasurementSummary(m events.AnalysisMeasurement) string {
	want := fmt.Sprintf("want %s %g", m.Comparison, m.Threshold)
	var s string
	switch {
	case m.Error != "":
		s = fmt.Sprintf("%s: %s (%s)", m.Query, m.Error, want)
	case m.Value == nil:
		s = fmt.Sprintf("%s: no data (%s)", m.Query, want)
	case m.Baseline != nil:
		s = fmt.Sprintf("%s %g - baseline %g = %g (%s)", m.Query, *m.Value, *m.Baseline, *m.Value-*m.Baseline, want)
	default:
		s = fmt.Sprintf("%s %g (%s)", m.Query, *m.Value, want)
	}
	if m.Outcome != "" {
		s += " " + m.Outcome
	}
	return s
}
