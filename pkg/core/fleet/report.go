package fleet

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Report is one member's rollout outcome as the hub received it: a
// rollout.completed or rollout.halted event. Cluster comes from the
// subject it arrived on (only that member may publish there), never from
// its body.
type Report struct {
	Cluster string
	// Event and Type are the event's id and type; At its time.
	Event   string
	Type    string
	At      time.Time
	Rollout events.RolloutData
}

// ErrNotThisPush: the report's upgrade id is not the one this push derives
// for its workload; it may belong to another push.
var ErrNotThisPush = errors.New("not a rollout of this push")

// ErrRefused marks a report the hub will never take: a cluster or workload
// the policy does not name, a stage not released, an unknown type.
var ErrRefused = errors.New("report refused")

// Apply records rep in r when it is a newer outcome of this push's rollout
// of a policy workload in a released cluster; it reports whether r
// changed. A duplicate or an older report changes nothing. The error says
// why a report was not taken (ErrNotThisPush, or ErrRefused with a reason).
func Apply(r *Record, rep Report, now time.Time) (bool, error) {
	o, err := check(r, rep)
	if err != nil {
		return false, err
	}
	w := rep.Rollout.Workload.String()
	kept, ok := r.Members[rep.Cluster].Rollouts[w]
	if ok && (kept.Event == rep.Event || rep.At.Before(kept.At)) {
		return false, nil
	}
	o.ReceivedAt = now
	if r.Members == nil {
		r.Members = map[string]Member{}
	}
	m := r.Members[rep.Cluster]
	if m.Rollouts == nil {
		m.Rollouts = map[string]Outcome{}
	}
	m.Rollouts[w] = o
	r.Members[rep.Cluster] = m
	return true, nil
}

// check is the outcome rep claims, or why it is not taken.
func check(r *Record, rep Report) (Outcome, error) {
	d := rep.Rollout
	w := d.Workload
	w.UID = ""
	if d.UpgradeID != events.DeriveUpgradeID(r.Push, w) {
		return Outcome{}, ErrNotThisPush
	}
	i := r.Policy.StageOf(rep.Cluster)
	if i < 0 {
		return Outcome{}, fmt.Errorf("%w: cluster %q is in no stage", ErrRefused, rep.Cluster)
	}
	if _, ok := r.Sent[rep.Cluster]; !ok {
		return Outcome{}, fmt.Errorf("%w: cluster %q (stage %s) was not sent the push", ErrRefused, rep.Cluster, r.Policy.Stages[i].Name)
	}
	if !slices.Contains(r.Policy.Workloads, w.String()) {
		return Outcome{}, fmt.Errorf("%w: workload %s is not in the policy", ErrRefused, w)
	}
	o := Outcome{UpgradeID: d.UpgradeID, Reason: d.Reason, Message: d.Message, Analysis: d.Analysis, Event: rep.Event, At: rep.At}
	switch rep.Type {
	case events.RolloutCompleted:
		o.State = Succeeded
		if d.Counts.Failed > 0 || d.Counts.RolledBack > 0 {
			o.State = Failed
		}
	case events.RolloutHalted:
		o.State = Halted
	default:
		return Outcome{}, fmt.Errorf("%w: type %q is not rollout.completed or rollout.halted", ErrRefused, rep.Type)
	}
	if rep.Event == "" {
		return Outcome{}, fmt.Errorf("%w: no event id", ErrRefused)
	}
	return o, nil
}
