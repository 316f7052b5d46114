package analysis

import (
	"fmt"
	"math"
	"time"
)

// Phase is where a step's analysis is.
type Phase string

// The phases of a step. Passed promotes; Failed rolls the canary back;
// Inconclusive halts for an operator; Running measures on.
const (
	Running      Phase = "Running"
	Passed       Phase = "Passed"
	Failed       Phase = "Failed"
	Inconclusive Phase = "Inconclusive"
)

// Measurement is one evaluation of one query, as the rollout record keeps
// it. Value (and Baseline, for a baseline query) nil, or Error set, make
// it inconclusive.
type Measurement struct {
	Query    string    `json:"query"`
	At       time.Time `json:"at"`
	Value    *float64  `json:"value,omitempty"`
	Baseline *float64  `json:"baseline,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Outcome of one measurement against its query.
type Outcome string

// The outcomes of a measurement.
const (
	Success   Outcome = "Success"
	Failure   Outcome = "Failure"
	NoVerdict Outcome = "Inconclusive"
)

// Judge says whether m meets q, and the value compared with the threshold
// (canary minus baseline for a baseline query). An error, a missing value
// or baseline, NaN or an infinity is NoVerdict: never a success.
func Judge(q Query, m Measurement) (Outcome, float64) {
	if m.Error != "" || m.Value == nil || (q.Baseline && m.Baseline == nil) {
		return NoVerdict, math.NaN()
	}
	v := *m.Value
	if q.Baseline {
		v -= *m.Baseline
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return NoVerdict, v
	}
	if compare(v, q.Comparison, q.Threshold) {
		return Success, v
	}
	return Failure, v
}

func validComparison(c string) bool {
	switch c {
	case "<", "<=", ">", ">=":
		return true
	}
	return false
}

func compare(v float64, op string, t float64) bool {
	switch op {
	case "<":
		return v < t
	case "<=":
		return v <= t
	case ">":
		return v > t
	case ">=":
		return v >= t
	}
	return false
}

// describe is a measurement in words: the query, the value (with the
// baseline it was measured against) and the threshold.
func describe(q Query, m Measurement, v float64) string {
	switch {
	case m.Error != "":
		return fmt.Sprintf("query %s: %s", q.Name, m.Error)
	case m.Value == nil:
		return fmt.Sprintf("query %s: no data for the canary pods", q.Name)
	case q.Baseline && m.Baseline == nil:
		return fmt.Sprintf("query %s: no data for the baseline pods", q.Name)
	case q.Baseline:
		return fmt.Sprintf("query %s: canary %g - baseline %g = %g, want %s %g",
			q.Name, *m.Value, *m.Baseline, v, q.Comparison, q.Threshold)
	}
	return fmt.Sprintf("query %s: %g, want %s %g", q.Name, v, q.Comparison, q.Threshold)
}
