package events

import (
	"fmt"
	"time"
)

// Analysis event types: a canary step of a rollout judged by the
// workload's own metrics (its inplace.dev/analysis annotation).
const (
	// RolloutAnalysisMeasured: one query of a canary step was measured
	// (the rendered PromQL, the value, the baseline, the threshold and what
	// the measurement says), or its measurement failed and why.
	RolloutAnalysisMeasured = "dev.inplace.rollout.analysis.measured.v1"
	// RolloutAnalysisPassed: a canary step's analysis passed; the rollout
	// goes on to its next step or its remaining waves.
	RolloutAnalysisPassed = "dev.inplace.rollout.analysis.passed.v1"
	// RolloutAnalysisFailed: a canary step's analysis failed (a query
	// missed its threshold: the canary pods are rolled back) or was
	// inconclusive (no data, a query error past the step's deadline); the
	// rollout halts, never promotes.
	RolloutAnalysisFailed = "dev.inplace.rollout.analysis.failed.v1"
)

// Phases of an analysis step (AnalysisData.Phase).
const (
	AnalysisRunning      = "Running"
	AnalysisPassed       = "Passed"
	AnalysisFailed       = "Failed"
	AnalysisInconclusive = "Inconclusive"
)

// Reasons a rollout halts on its analysis (RolloutData.Reason,
// AnalysisData.Reason).
const (
	// ReasonAnalysisFailed: a query missed its threshold more often than
	// tolerated; the canary pods were rolled back in place.
	ReasonAnalysisFailed = "AnalysisFailed"
	// ReasonAnalysisInconclusive: the measurements said nothing in time
	// (Prometheus unreachable, a query error, no data, NaN), or no
	// Prometheus is configured; nothing was promoted.
	ReasonAnalysisInconclusive = "AnalysisInconclusive"
	// ReasonAnalysisPassed: every step of the analysis passed (the
	// verdict a completed rollout's CDEvent carries).
	ReasonAnalysisPassed = "AnalysisPassed"
)

// AnalysisData (rollout.analysis.measured, .passed, .failed) is one step
// of a rollout's canary analysis.
type AnalysisData struct {
	UpgradeID string    `json:"upgradeID"`
	Workload  ObjectRef `json:"workload"`
	// Target is the pushed reference the canary runs.
	Target string `json:"target"`
	// Step indexes the analysis step (from 0) of Steps.
	Step  int `json:"step"`
	Steps int `json:"steps"`
	// CanaryPods run the new version; BaselinePods have not moved yet.
	CanaryPods   []string `json:"canaryPods,omitempty"`
	BaselinePods []string `json:"baselinePods,omitempty"`
	// Phase is the step's verdict: Running (measured), Passed, Failed or
	// Inconclusive.
	Phase string `json:"phase"`
	// Reason is ReasonAnalysisFailed or ReasonAnalysisInconclusive when
	// the step failed; Message says why, naming the query, the value and
	// the threshold.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Measurements are the measurement taken (measured), or the step's
	// measurements (passed, failed).
	Measurements []AnalysisMeasurement `json:"measurements,omitempty"`
}

// AnalysisMeasurement is one measurement of one query.
type AnalysisMeasurement struct {
	// Query names the query; Expr is its PromQL as rendered for the
	// canary pods, BaselineExpr for the baseline pods.
	Query        string `json:"query"`
	Expr         string `json:"expr,omitempty"`
	BaselineExpr string `json:"baselineExpr,omitempty"`
	// Comparison and Threshold are the condition the value must meet
	// (canary minus baseline, for a baseline query).
	Comparison string    `json:"comparison"`
	Threshold  float64   `json:"threshold"`
	At         time.Time `json:"at"`
	Value      *float64  `json:"value,omitempty"`
	Baseline   *float64  `json:"baseline,omitempty"`
	// Error is why the measurement failed (it is inconclusive).
	Error string `json:"error,omitempty"`
	// Outcome is Success, Failure or Inconclusive.
	Outcome string `json:"outcome,omitempty"`
}

// Validate implements Validator.
func (d AnalysisData) Validate() error {
	switch {
	case d.UpgradeID == "":
		return fieldErr("data.upgradeID", "required")
	case d.Target == "":
		return fieldErr("data.target", "required")
	case d.Step < 0 || d.Step >= max(d.Steps, 1):
		return fieldErr("data.step", fmt.Sprintf("%d is not a step of %d", d.Step, d.Steps))
	}
	switch d.Phase {
	case AnalysisRunning, AnalysisPassed, AnalysisFailed, AnalysisInconclusive:
	default:
		return fieldErr("data.phase", fmt.Sprintf("%q: want Running, Passed, Failed or Inconclusive", d.Phase))
	}
	for i, m := range d.Measurements {
		if m.Query == "" {
			return fieldErr(fmt.Sprintf("data.measurements[%d].query", i), "required")
		}
	}
	return d.Workload.validate("data.workload")
}
