package history

import (
	"encoding/json"
	"sort"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
)

// Trace is the whole chain of one rollout: the push, each pod's steps, and
// how the rollout ended.
type Trace struct {
	UpgradeID string    `json:"upgradeID"`
	Workload  string    `json:"workload,omitempty"`
	Target    string    `json:"target,omitempty"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	// State is the last rollout event's verb: "completed", "halted",
	// "resumed"; "" while no rollout event was seen (in flight).
	State string `json:"state,omitempty"`
	// Push is the image.pushed (or upgrade.requested) that started it, when
	// it is still in the stream.
	Push *Step     `json:"push,omitempty"`
	Pods []PodPath `json:"pods"`
	// Rollout are the rollout-level steps after the push (rollout.halted,
	// rollout.completed, CDEvents), in time order.
	Rollout []Step `json:"rollout,omitempty"`
}

// PodPath is one pod's way through the chain.
type PodPath struct {
	Pod  string `json:"pod"`
	UID  string `json:"uid"`
	Node string `json:"node,omitempty"`
	Wave int    `json:"wave"`
	// Outcome is succeeded, failed or rolledback; "" while in flight.
	Outcome string `json:"outcome,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Took is from the pod's first step to its outcome.
	Took       time.Duration `json:"-"`
	TookMillis int64         `json:"tookMillis,omitempty"`
	Steps      []Step        `json:"steps"`
}

// Step is one event of the trace.
type Step struct {
	Seq  uint64    `json:"seq,omitempty"`
	Time time.Time `json:"time"`
	// Type is the short type ("pod.patched").
	Type string `json:"type"`
	ID   string `json:"id"`
	// After is the time since the step before it: the previous step of the
	// same pod (the rollout's start for a pod's first step), or the previous
	// event of the rollout for rollout-level steps.
	After       time.Duration `json:"-"`
	AfterMillis int64         `json:"afterMillis"`
	Detail      string        `json:"detail"`
	Dead        *DeadLetter   `json:"deadLetter,omitempty"`
}

// podStep is what a pod-level event says about its pod.
type podStep struct {
	pod     events.PodRef
	plan    *events.Plan
	outcome *events.OutcomeData
}

// Build turns the records of one upgrade (Collector.Records) into its trace.
func Build(upgradeID string, recs []Record) Trace {
	t := Trace{UpgradeID: upgradeID, Pods: []PodPath{}}
	recs = append([]Record(nil), recs...)
	sortRecords(recs)
	pods := map[string]*PodPath{}
	var order []*PodPath
	var prev time.Time
	for _, r := range recs {
		at := r.Time()
		if t.Start.IsZero() {
			t.Start, prev = at, at
		}
		st := newStep(r)
		if ps, ok := podOf(r.Event); ok {
			p := pods[ps.pod.Namespace+"/"+ps.pod.Name+"/"+ps.pod.UID]
			if p == nil {
				p = &PodPath{Pod: ps.pod.String(), UID: ps.pod.UID}
				pods[ps.pod.Namespace+"/"+ps.pod.Name+"/"+ps.pod.UID] = p
				order = append(order, p)
			}
			p.add(&t, st, ps, r.Dead != nil)
		} else {
			st.After = at.Sub(prev)
			st.AfterMillis = st.After.Milliseconds()
			t.rolloutStep(st, r)
		}
		prev, t.End = maxTime(prev, at), maxTime(t.End, at)
	}
	for _, p := range order {
		p.finish(t.Start)
		t.Pods = append(t.Pods, *p)
	}
	sort.SliceStable(t.Pods, func(i, j int) bool { return t.Pods[i].Wave < t.Pods[j].Wave })
	return t
}

func newStep(r Record) Step {
	st := Step{Seq: r.Seq, Time: r.Time(), Type: events.Short(r.Event.Type()), ID: r.Event.ID(), Detail: Detail(r.Event)}
	if r.Dead != nil {
		st.Dead = r.Dead
		st.Detail = "dead-lettered by " + r.Dead.Function + ": " + r.Dead.Reason
	}
	return st
}

func (t *Trace) rolloutStep(st Step, r Record) {
	switch r.Event.Type() {
	case events.ImagePushed, events.UpgradeRequested:
		if t.Push == nil && r.Dead == nil {
			st.After, st.AfterMillis = 0, 0
			t.Push = &st
			return
		}
	case events.RolloutCompleted, events.RolloutHalted:
		var d events.RolloutData
		if json.Unmarshal(r.Event.Data(), &d) == nil && r.Dead == nil {
			t.Workload, t.Target, t.State = d.Workload.String(), d.Target, verb(r.Event.Type())
		}
	case events.RolloutResumed:
		if r.Dead == nil {
			t.State = "resumed"
		}
	}
	t.Rollout = append(t.Rollout, st)
}

func (p *PodPath) add(t *Trace, st Step, ps podStep, dead bool) {
	if ps.pod.Node != "" {
		p.Node = ps.pod.Node
	}
	if ps.plan != nil {
		p.Wave = ps.plan.Wave
		if t.Workload == "" {
			t.Workload, t.Target = ps.plan.Owner.String(), ps.plan.Target
		}
	}
	p.Steps = append(p.Steps, st)
	if ps.outcome != nil && !dead {
		p.Outcome, p.Reason, p.Message = ps.outcome.Outcome, ps.outcome.Reason, ps.outcome.Message
		p.Took = st.Time.Sub(p.Steps[0].Time)
		p.TookMillis = p.Took.Milliseconds()
	}
}

// finish sets each step's time since the one before it.
func (p *PodPath) finish(start time.Time) {
	prev := start
	for i := range p.Steps {
		s := &p.Steps[i]
		s.After, s.AfterMillis = s.Time.Sub(prev), s.Time.Sub(prev).Milliseconds()
		prev = maxTime(prev, s.Time)
	}
}

// podOf says which pod a pod-level event is about.
func podOf(e cloudevents.Event) (podStep, bool) {
	var ps podStep
	var err error
	switch e.Type() {
	case events.UpgradePlanned:
		var p events.Plan
		err = json.Unmarshal(e.Data(), &p)
		ps.plan = &p
	case events.ImagePrepulled:
		var d events.PrepulledData
		err = json.Unmarshal(e.Data(), &d)
		ps.plan = &d.Plan
	case events.PodPatched:
		var d events.PatchedData
		err = json.Unmarshal(e.Data(), &d)
		ps.plan = &d.Plan
	case events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack:
		var d events.OutcomeData
		err = json.Unmarshal(e.Data(), &d)
		ps.plan, ps.outcome = &d.Plan, &d
	case events.PodUpdated:
		var d events.PodUpdatedData
		err = json.Unmarshal(e.Data(), &d)
		ps.pod = events.PodRef{Namespace: d.Pod.Namespace, Name: d.Pod.Name, UID: string(d.Pod.UID), Node: d.Pod.Spec.NodeName}
		return ps, err == nil && ps.pod.Name != ""
	case events.ContainerRestarted:
		var d events.ContainerRestartedData
		err = json.Unmarshal(e.Data(), &d)
		ps.pod = d.Pod
		return ps, err == nil && ps.pod.Name != ""
	default:
		return ps, false
	}
	if ps.plan != nil {
		ps.pod = ps.plan.Pod
	}
	return ps, err == nil && ps.pod.Name != ""
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
