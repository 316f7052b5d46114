package analysis

import (
	"fmt"
	"strings"
	"time"
)

// Verdict is what a step's measurements say at a moment.
type Verdict struct {
	Phase Phase
	// Reason says why, naming the query, the value and the threshold of
	// the measurement that decided (or the last one, while Running).
	Reason string
	// Measure lists the queries due for a measurement now (Running only).
	Measure []string
	// Next is when to look again (Running only): the end of the bake, the
	// next interval, or the deadline, whichever comes first.
	Next time.Time
}

// Evaluate judges step from its measurements, the wave's end (started) and
// now. It is level-triggered: the same inputs give the same verdict, so a
// process that restarts mid-analysis resumes from the record. A step
// without analysis passes once its bake is over.
func Evaluate(st Step, started time.Time, ms []Measurement, now time.Time) Verdict {
	bakeEnd := started.Add(st.Bake.D())
	a := st.Analysis
	if a == nil {
		if now.Before(bakeEnd) {
			return Verdict{Phase: Running, Reason: "baking", Next: bakeEnd}
		}
		return Verdict{Phase: Passed, Reason: fmt.Sprintf("baked %s", st.Bake.D())}
	}
	deadline := started.Add(a.deadline(st.Bake.D()))
	run := Verdict{Phase: Running, Next: deadline}
	var why []string
	passed := 0
	for _, q := range a.Queries {
		v := a.judgeQuery(q, ms, bakeEnd, now)
		switch v.Phase {
		case Failed, Inconclusive:
			return v
		case Passed:
			passed++
			continue
		}
		if v.Reason != "" {
			why = append(why, v.Reason)
		}
		if !v.Next.After(now) {
			run.Measure = append(run.Measure, q.Name)
		} else if v.Next.Before(run.Next) {
			run.Next = v.Next
		}
	}
	run.Reason = strings.Join(why, "; ")
	if run.Reason == "" {
		run.Reason = "measuring"
		if now.Before(bakeEnd) {
			run.Reason = "baking"
		}
	}
	if passed == len(a.Queries) {
		return Verdict{Phase: Passed, Reason: fmt.Sprintf("all %d queries passed %d measurements", passed, a.count())}
	}
	if !now.Before(deadline) {
		return Verdict{Phase: Inconclusive, Reason: fmt.Sprintf("deadline %s passed: %s", a.deadline(st.Bake.D()), run.Reason)}
	}
	if len(run.Measure) > 0 {
		run.Next = now
	}
	return run
}

// judgeQuery is the verdict on one query's measurements (those taken
// after the bake; earlier ones are ignored). It passes after Count
// conclusive measurements with at most FailureLimit failures and at least
// one success. Running carries when it is due next.
func (a *Analysis) judgeQuery(q Query, all []Measurement, bakeEnd, now time.Time) Verdict {
	var ok, failed, errorsInRow int
	var last Measurement
	var lastReason string
	for _, m := range all {
		if m.Query != q.Name || m.At.Before(bakeEnd) {
			continue
		}
		out, v := Judge(q, m)
		last, lastReason = m, describe(q, m, v)
		switch out {
		case Success:
			ok, errorsInRow = ok+1, 0
		case Failure:
			failed, errorsInRow = failed+1, 0
		default:
			errorsInRow++
		}
		if failed > a.FailureLimit {
			return Verdict{Phase: Failed, Reason: fmt.Sprintf("%s (%d failed, %d tolerated)", lastReason, failed, a.FailureLimit)}
		}
		if errorsInRow > a.errorLimit() {
			return Verdict{Phase: Inconclusive, Reason: fmt.Sprintf("%s (%d inconclusive in a row, %d tolerated)", lastReason, errorsInRow, a.errorLimit())}
		}
	}
	if ok+failed >= a.count() && ok > 0 {
		return Verdict{Phase: Passed, Reason: lastReason}
	}
	next := bakeEnd
	if !last.At.IsZero() {
		next = last.At.Add(a.interval())
	}
	return Verdict{Phase: Running, Reason: lastReason, Next: next}
}
