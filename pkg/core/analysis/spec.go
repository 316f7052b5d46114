package analysis

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Spec is the analysis of one workload: the steps a rollout goes through
// before its remaining waves, in order.
type Spec struct {
	// Args are constants the queries may use as {{.Args.name}}.
	Args  map[string]string `json:"args,omitempty"`
	Steps []Step            `json:"steps"`
}

// Step is either a canary (Canary set: move pods until that many run the
// new version, wait Bake, then measure Analysis) or an approval (wait for
// `inplace approve`).
type Step struct {
	// Canary is how many pods run the new version once the step's wave is
	// done: a number or a percent of the replicas (rounded up, at least 1).
	// Counts are cumulative: a later step names a larger share.
	Canary *intstr.IntOrString `json:"canary,omitempty"`
	// Bake is how long the canary runs before the first measurement.
	Bake Duration `json:"bake,omitempty"`
	// Analysis is what is measured after the bake; none promotes after it.
	Analysis *Analysis `json:"analysis,omitempty"`
	// Approval makes the step wait for an approver.
	Approval bool `json:"approval,omitempty"`
}

// Analysis is a set of queries measured Count times, Interval apart.
type Analysis struct {
	Queries []Query `json:"queries"`
	// Count is how many conclusive measurements each query needs. Default 1.
	Count int `json:"count,omitempty"`
	// Interval is the time between measurements. Default 30s.
	Interval Duration `json:"interval,omitempty"`
	// FailureLimit is how many failed measurements of a query are
	// tolerated. Default 0.
	FailureLimit int `json:"failureLimit,omitempty"`
	// ErrorLimit is how many inconclusive measurements in a row (query
	// error, no data, NaN) are retried before the step is Inconclusive.
	// Default 2.
	ErrorLimit *int `json:"errorLimit,omitempty"`
	// Deadline bounds the step from the end of its wave: a step not
	// Passed or Failed by then is Inconclusive. Default: the bake plus an
	// interval for every measurement, failure and error allowed, plus one.
	Deadline Duration `json:"deadline,omitempty"`
}

// Query is one PromQL expression (a Go template over Vars) and the
// condition its value must meet.
type Query struct {
	Name string `json:"name"`
	// Query is the PromQL, templated; it must return one number.
	Query string `json:"query"`
	// Comparison is how the value must relate to Threshold: <, <=, >, >=.
	Comparison string  `json:"comparison"`
	Threshold  float64 `json:"threshold"`
	// Baseline evaluates Query also over the pods not yet moved and
	// compares canary minus baseline with Threshold.
	Baseline bool `json:"baseline,omitempty"`
}

// Defaults of an Analysis.
const (
	DefaultCount      = 1
	DefaultInterval   = 30 * time.Second
	DefaultErrorLimit = 2
)

// count is how many conclusive measurements a query needs.
func (a *Analysis) count() int {
	if a.Count == 0 {
		return DefaultCount
	}
	return a.Count
}

func (a *Analysis) interval() time.Duration {
	if a.Interval.D() == 0 {
		return DefaultInterval
	}
	return a.Interval.D()
}

func (a *Analysis) errorLimit() int {
	if a.ErrorLimit == nil {
		return DefaultErrorLimit
	}
	return *a.ErrorLimit
}

// deadline is how long after its wave a step may take, bake included.
func (a *Analysis) deadline(bake time.Duration) time.Duration {
	if a.Deadline.D() != 0 {
		return a.Deadline.D()
	}
	n := a.count() + a.FailureLimit + a.errorLimit() + 1
	return bake + time.Duration(n)*a.interval()
}

// CanaryPods is how many of replicas run the new version once step's wave
// is done: its count, or its percent rounded up, at least 1 and at most
// replicas. An approval step moves none (0).
func (s Step) CanaryPods(replicas int) int {
	if s.Canary == nil || replicas <= 0 {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(s.Canary, replicas, true)
	if err != nil {
		return 0 // Parse refused it
	}
	return min(max(n, 1), replicas)
}
