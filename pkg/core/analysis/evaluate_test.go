package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// m is a measurement of query q at second s: a value, or nil for none.
func m(q string, s int, v *float64) Measurement { return Measurement{Query: q, At: at(s), Value: v} }

func mb(q string, s int, v, base float64) Measurement {
	return Measurement{Query: q, At: at(s), Value: &v, Baseline: &base}
}

func merr(q string, s int, e string) Measurement { return Measurement{Query: q, At: at(s), Error: e} }

func step() Step {
	one, errs := intstr.FromInt32(1), 1
	return Step{Canary: &one, Bake: "60s", Analysis: &Analysis{
		Count: 3, Interval: "10s", FailureLimit: 1, ErrorLimit: &errs,
		Queries: []Query{
			{Name: "errors", Query: "x", Comparison: "<", Threshold: 0.05, Baseline: true},
			{Name: "up", Query: "y", Comparison: ">=", Threshold: 1},
		},
	}}
}

func TestEvaluate(t *testing.T) {
	one := ptr(1.0)
	good := func(s int) []Measurement { return []Measurement{mb("errors", s, 0.01, 0.01), m("up", s, one)} }
	cat := func(ms ...[]Measurement) []Measurement {
		var out []Measurement
		for _, x := range ms {
			out = append(out, x...)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		ms     []Measurement
		now    int
		want   Phase
		next   int      // seconds; -1: not checked
		due    []string // queries to measure now
		reason string
	}{
		{name: "baking", now: 30, want: Running, next: 60},
		{name: "bake over: measure both", now: 60, want: Running, next: 60, due: []string{"errors", "up"}},
		{name: "measured: wait an interval", ms: good(60), now: 61, want: Running, next: 70},
		{name: "measurements before the bake end do not count", ms: cat(good(10), good(20), good(30)), now: 61, want: Running, next: 61, due: []string{"errors", "up"}},
		{name: "three good: passed", ms: cat(good(60), good(70), good(80)), now: 81, want: Passed, next: -1},
		{name: "one failure tolerated", ms: cat(good(60), []Measurement{mb("errors", 70, 0.2, 0.01), m("up", 70, one)}, good(80)), now: 81, want: Passed, next: -1},
		{name: "two failures: failed, naming query, value, threshold",
			ms: []Measurement{mb("errors", 60, 0.11, 0.01), mb("errors", 70, 0.12, 0.01)}, now: 71, want: Failed, next: -1,
			reason: "query errors: canary 0.12 - baseline 0.01 = 0.11, want < 0.05 (2 failed, 1 tolerated)"},
		{name: "without baseline", ms: []Measurement{m("up", 60, ptr(0.0)), m("up", 70, ptr(0.5))}, now: 71, want: Failed, next: -1,
			reason: "query up: 0.5, want >= 1 (2 failed, 1 tolerated)"},
		{name: "an error is retried", ms: cat([]Measurement{merr("errors", 60, "connection refused")}, []Measurement{m("up", 60, one)}), now: 65, want: Running, next: 70,
			reason: "connection refused"},
		{name: "errors in a row beyond the limit: inconclusive",
			ms: []Measurement{merr("errors", 60, "connection refused"), merr("errors", 70, "connection refused")}, now: 71, want: Inconclusive, next: -1,
			reason: "query errors: connection refused (2 inconclusive in a row, 1 tolerated)"},
		{name: "a success resets the errors in a row",
			ms: []Measurement{merr("errors", 60, "x"), mb("errors", 70, 0, 0), merr("errors", 80, "x"), m("up", 80, ptr(1.0))}, now: 81, want: Running, next: 90},
		{name: "no data is never a success",
			ms: []Measurement{m("up", 60, nil), m("up", 70, nil)}, now: 71, want: Inconclusive, next: -1, reason: "query up: no data for the canary pods"},
		{name: "no baseline is never a success",
			ms: []Measurement{m("errors", 60, ptr(0.0)), m("errors", 70, ptr(0.0))}, now: 71, want: Inconclusive, next: -1, reason: "no data for the baseline pods"},
		{name: "NaN is never a success",
			ms: []Measurement{m("up", 60, ptr(math.NaN())), m("up", 70, ptr(math.Inf(1)))}, now: 71, want: Inconclusive, next: -1},
		{name: "deadline: inconclusive", ms: good(60), now: 60 + 6*10, want: Inconclusive, next: -1, reason: "deadline 2m0s passed"},
		{name: "before the deadline: next is the deadline at most", ms: cat(good(60), good(70)), now: 119, want: Running, next: 119, due: []string{"errors", "up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate(step(), t0, tc.ms, at(tc.now))
			if got.Phase != tc.want {
				t.Fatalf("phase %s, want %s (%s)", got.Phase, tc.want, got.Reason)
			}
			if tc.next >= 0 && !got.Next.Equal(at(tc.next)) {
				t.Errorf("next %s, want +%ds", got.Next.Sub(t0), tc.next)
			}
			if d := cmp.Diff(tc.due, got.Measure); d != "" {
				t.Errorf("due (-want +got):\n%s", d)
			}
			if !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", got.Reason, tc.reason)
			}
		})
	}
}

func TestEvaluateWithoutAnalysis(t *testing.T) {
	st := Step{Canary: ptr(intstr.FromInt32(1)), Bake: "30s"}
	if v := Evaluate(st, t0, nil, at(10)); v.Phase != Running || !v.Next.Equal(at(30)) {
		t.Errorf("during the bake: %+v", v)
	}
	if v := Evaluate(st, t0, nil, at(30)); v.Phase != Passed {
		t.Errorf("after the bake: %+v", v)
	}
}

func TestEvaluateNeedsASuccess(t *testing.T) {
	st := step()
	st.Analysis.Count, st.Analysis.FailureLimit = 1, 1
	st.Analysis.Queries = st.Analysis.Queries[1:]
	v := Evaluate(st, t0, []Measurement{m("up", 60, ptr(0.0))}, at(61))
	if v.Phase != Running {
		t.Errorf("one tolerated failure and no success: %s (%s), want Running", v.Phase, v.Reason)
	}
}

func TestJudge(t *testing.T) {
	q := Query{Name: "q", Comparison: "<=", Threshold: 1}
	for _, tc := range []struct {
		m    Measurement
		want Outcome
	}{
		{m("q", 0, ptr(1.0)), Success},
		{m("q", 0, ptr(1.5)), Failure},
		{m("q", 0, nil), NoVerdict},
		{merr("q", 0, "bad"), NoVerdict},
		{Measurement{Value: ptr(0.0), Error: "partial"}, NoVerdict},
	} {
		if got, _ := Judge(q, tc.m); got != tc.want {
			t.Errorf("Judge(%+v) = %s, want %s", tc.m, got, tc.want)
		}
	}
	for op, want := range map[string][3]bool{"<": {true, false, false}, "<=": {true, true, false}, ">": {false, false, true}, ">=": {false, true, true}} {
		for i, v := range []float64{0, 1, 2} {
			if got := compare(v, op, 1); got != want[i] {
				t.Errorf("%g %s 1 = %v, want %v", v, op, got, want[i])
			}
		}
	}
}
