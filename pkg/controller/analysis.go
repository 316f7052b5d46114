package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Measurer takes one measurement of a query for a rollout's canary (and,
// for a baseline query, its baseline pods): pkg/inputs/prometheus.Client.
// A failure is kept in the measurement's Error, which makes it
// inconclusive.
type Measurer interface {
	Measure(ctx context.Context, q analysis.Query, args map[string]string, target analysis.Target, now time.Time) analysis.Measurement
}

// NoMeasurer is the verdict on a step that needs measurements when no
// Prometheus is configured: never a promotion.
const NoMeasurer = "no Prometheus configured (--prometheus-url): the analysis cannot measure"

// Event reasons on the workload for its analysis.
const (
	EventAnalysisPassed = "AnalysisPassed"
	EventAnalysisFailed = "AnalysisFailed"
)

// Analyze takes the next step of the canary analysis of ref's rollout, as
// its record and the clock say now: it starts the current step's clock
// once its canary pods are all in, measures the queries due, records the
// measurements, and once the step is decided records the verdict: the
// next step's pods are planned (Passed), or the rollout halts (Failed,
// Inconclusive) and a failed canary is undone in place. It is
// level-triggered and durable: everything it decides from is in the
// record, so another process resumes it where this one stopped. It
// returns the events to publish; while the step runs, the Waker looks
// again at the verdict's Next.
func (ctl *Rollouts) Analyze(ctx context.Context, ref events.ObjectRef) ([]cloudevents.Event, error) {
	r, err := ctl.read(ctx, ref)
	if err != nil || r == nil || !r.Canaried() {
		return nil, err
	}
	now := ctl.d.Now()
	if r.Analysis.StepStartedAt.IsZero() {
		if r, err = ctl.changeAnalysis(ctx, r, func(cur *rollout.Rollout) bool { return rollout.StartStep(cur, now) }); err != nil || r == nil {
			return nil, err
		}
	}
	in, err := analysisEvent(r)
	if err != nil {
		return nil, err
	}
	v, _ := rollout.Judge(r, now)
	var outs []cloudevents.Event
	if v.Phase == analysis.Running && len(v.Measure) > 0 {
		if ctl.d.Measurer == nil {
			v = analysis.Verdict{Phase: analysis.Inconclusive, Reason: NoMeasurer}
		} else if r, outs, err = ctl.measure(ctx, in, r, v.Measure, now); err != nil || r == nil {
			return outs, err
		} else {
			v, _ = rollout.Judge(r, now)
		}
	}
	if v.Phase == analysis.Running {
		ctl.requeue(r.Workload, v.Next.Sub(now))
		return outs, nil
	}
	more, err := ctl.decide(ctx, in, r, v, now)
	return append(outs, more...), err
}

// read is ref's rollout record (nil: none).
func (ctl *Rollouts) read(ctx context.Context, ref events.ObjectRef) (*rollout.Rollout, error) {
	raw, _, err := ctl.d.Store.Get(ctx, rollout.Key(ref))
	if err != nil {
		return nil, wrap("read rollout of "+ref.String(), err)
	}
	return Decode(raw)
}

// errAnalysisMoved: the record moved on from the step being judged.
var errAnalysisMoved = errors.New("the analysis moved on")

// changeAnalysis writes change to r's record when it still holds r's
// rollout at r's step, guarded by the record's revision; it returns the
// record as written, or nil when change changed nothing or the record
// moved on (another worker took the step).
func (ctl *Rollouts) changeAnalysis(ctx context.Context, r *rollout.Rollout, change func(*rollout.Rollout) bool) (*rollout.Rollout, error) {
	var out *rollout.Rollout
	_, err := ctl.d.Store.Update(ctx, rollout.Key(r.Workload), func(old []byte) ([]byte, error) {
		cur, err := Decode(old)
		if err != nil {
			return nil, err
		}
		if cur == nil || cur.UpgradeID != r.UpgradeID || cur.Analysis == nil || cur.Analysis.Step != r.Analysis.Step || !change(cur) {
			return nil, errAnalysisMoved
		}
		out = cur
		return json.Marshal(cur)
	})
	if errors.Is(err, errAnalysisMoved) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("record the analysis of "+r.Workload.String(), err)
	}
	return out, nil
}

// requeue has the Waker look at ref's analysis again after d.
func (ctl *Rollouts) requeue(ref events.ObjectRef, d time.Duration) {
	if f := ctl.after.Load(); f != nil {
		(*f)(ref, max(d, 0))
	}
}

// analysisEvent is the input an analysis step's transitions are made
// from: one per rollout and step, so a step judged again after a crash
// re-emits the same events (same ids).
func analysisEvent(r *rollout.Rollout) (cloudevents.Event, error) {
	e, err := events.New(fmt.Sprintf("analysis-%s-%d", r.UpgradeID, r.Analysis.Step), "dev.inplace.rollout.analysis.v1",
		events.Source(Name), r.Workload.String(), map[string]string{"upgradeID": r.UpgradeID})
	if err == nil {
		e.SetExtension(events.ExtUpgradeID, r.UpgradeID)
		if r.TraceParent != "" {
			e.SetExtension(events.ExtTraceParent, r.TraceParent)
		}
	}
	return e, err
}

// decide records v, the step's verdict, and returns what follows: the
// verdict's event, the next step's plans or the halt, and, for a failed
// canary, the undo of its pods.
func (ctl *Rollouts) decide(ctx context.Context, in cloudevents.Event, r *rollout.Rollout, v analysis.Verdict, now time.Time) ([]cloudevents.Event, error) {
	step, ttl := r.Analysis.Step, ctl.d.Defaults.Load().ApprovalTimeout
	var ended *rollout.Rollout
	change := func(cur *rollout.Rollout) {
		if cur.Analysis != nil && cur.Analysis.Step == step && rollout.EndStep(cur, v, in.ID(), ttl, now) {
			ended = cur.Clone()
		}
	}
	written, planned, err := ctl.replanRecord(ctx, in, r.Workload, change, false)
	if err != nil || written == nil || ended == nil {
		return nil, err
	}
	verdict, err := ctl.verdictEvent(in, ended, step, v)
	if err != nil {
		return nil, err
	}
	outs := []cloudevents.Event{verdict}
	ctl.eventOnVerdict(ended, step, v)
	more, err := ctl.Advance(ctx, in, written, planned)
	if err != nil {
		return nil, err
	}
	outs = append(outs, more...)
	back, err := ctl.undoCanary(in, written)
	if err != nil {
		return nil, err
	}
	if written.Canaried() {
		ctl.requeue(written.Workload, 0) // the next step's canary is in already
	}
	return append(outs, back...), nil
}

// eventOnVerdict records the verdict on the workload, as the kubelet words
// its Events.
func (ctl *Rollouts) eventOnVerdict(r *rollout.Rollout, step int, v analysis.Verdict) {
	n := len(r.Analysis.Spec.Steps)
	if v.Phase == analysis.Passed {
		ctl.Event(r.Workload, corev1.EventTypeNormal, EventAnalysisPassed, "Analysis step %d of %d of upgrade %s to %s passed: %s",
			step+1, n, r.UpgradeID, r.Target(), v.Reason)
		return
	}
	what := "the canary pods stay as they are"
	if v.Phase == analysis.Failed {
		what = "rolling the canary pods back"
	}
	ctl.Event(r.Workload, corev1.EventTypeWarning, EventAnalysisFailed, "Analysis step %d of %d of upgrade %s to %s %s: %s; %s",
		step+1, n, r.UpgradeID, r.Target(), map[analysis.Phase]string{analysis.Failed: "failed", analysis.Inconclusive: "was inconclusive"}[v.Phase],
		v.Reason, what)
}

// undoCanary is the undo push of written's canary when its analysis
// failed or an approval step after it was rejected or expired
// (rollout.Back), made by the input that ended it: its id derives from the
// upgrade.
func (ctl *Rollouts) undoCanary(in cloudevents.Event, written *rollout.Rollout) ([]cloudevents.Event, error) {
	if written == nil || written.EndedBy() != in.ID() {
		return nil, nil
	}
	push, ok, err := rollout.Back(written)
	if err != nil {
		ctl.Event(written.Workload, corev1.EventTypeWarning, EventAnalysisFailed, "Cannot roll the canary pods of upgrade %s back: %v", written.UpgradeID, err)
		ctl.d.Log.Warn("the canary cannot be rolled back", "workload", written.Workload.String(), "upgrade", written.UpgradeID, "err", err)
		return nil, nil
	}
	if !ok {
		return nil, nil
	}
	id := events.DeriveID(written.UpgradeID, events.UpgradeRequested, "analysis-undo")
	e, err := events.Follow(in, id, events.UpgradeRequested, events.Source(Name), push.Ref(), push)
	if err != nil {
		return nil, wrap("undo of the canary", err)
	}
	return []cloudevents.Event{e}, nil
}
