package rollout

import (
	"fmt"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Restart is a rollout that restarts containers in place on the bytes they
// run (container.restart.requested) instead of moving them to a push.
type Restart struct {
	RequestID  string                 `json:"requestID"`
	Containers []string               `json:"containers"`
	Strategy   events.RestartStrategy `json:"strategy,omitzero"`
	Reason     string                 `json:"reason,omitempty"`
	// Step is, with orderedRecreate, the index of the container being
	// restarted on every pod; the next is begun once every pod is done.
	Step int `json:"step,omitempty"`
	// FinishedAt is when the request ended (for its TTL).
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// NewRestart is the record of restart request id.
func NewRestart(id string, req events.RestartRequestData) *Restart {
	return &Restart{RequestID: id, Containers: req.Containers, Strategy: req.Strategy, Reason: req.Reason}
}

// ID implements Request.
func (x *Restart) ID() string { return x.RequestID }

// Current are the containers restarted in the current step.
func (x *Restart) Current() []string {
	if x.Strategy.OrderedRecreate && x.Step < len(x.Containers) {
		return x.Containers[x.Step : x.Step+1]
	}
	return x.Containers
}

// Target is how the rollout names what it does ("restart app,sidecar").
func (x *Restart) Target() string { return "restart " + strings.Join(x.Current(), ",") }

// Mark implements Request: every upgrade.planned of the restart carries it.
func (x *Restart) Mark(plan *events.Plan) {
	plan.Restart = &events.RestartPlan{RequestID: x.RequestID, Strategy: x.Strategy, Reason: x.Reason}
}

// Result implements Request: container.restart.succeeded, or .failed when
// it halted or left pods failed (failurePolicy Ignore).
func (x *Restart) Result(r *Rollout, halted bool) (string, any) {
	d := events.RestartResultData{RequestID: x.RequestID, Target: r.Workload, Containers: x.Containers,
		Strategy: x.Strategy, Counts: r.Counts(), Reason: r.Reason, Message: r.Message}
	if !halted && d.Counts.Failed == 0 {
		return events.ContainerRestartSucceeded, d
	}
	if d.Reason == "" {
		d.Reason = "RestartFailed"
		d.Message = fmt.Sprintf("%d of %d pods failed (failurePolicy Ignore)", d.Counts.Failed, d.Counts.Pods)
	}
	return events.ContainerRestartFailed, d
}

// StepID is the upgrade id of a step: the request's for the first, then
// "<request>-<n>", so each step's plans have ids of their own.
func (x *Restart) StepID() string {
	if x.Step == 0 {
		return x.RequestID
	}
	return fmt.Sprintf("%s-%d", x.RequestID, x.Step+1)
}

func (x *Restart) attach(r *Rollout) { r.Restart = x }

// step keeps, with orderedRecreate, only the current step's container of
// each candidate.
func (x *Restart) step(cands []Candidate) []Candidate {
	if !x.Strategy.OrderedRecreate {
		return cands
	}
	want := x.Current()
	out := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		c.Containers = nil
		for _, cp := range c.All {
			if len(want) == 1 && cp.Name == want[0] {
				c.Containers = append(c.Containers, cp)
			}
		}
		if len(c.Containers) == 0 && c.Why == "" {
			c.Why = "container " + strings.Join(want, ",") + " cannot be restarted"
		}
		out = append(out, c)
	}
	return out
}

// settle ends a restart whose pods are all done: the next step of an
// ordered restart (its pods planned anew from cands), or Completed. The
// template is left as it is: it keeps its stable reference.
func (x *Restart) settle(r *Rollout, cands []Candidate, inputID string, now time.Time) []*Pod {
	if x.Strategy.OrderedRecreate && x.Step+1 < len(x.Containers) {
		x.Step++
		r.UpgradeID = x.StepID()
		for name, p := range r.Pods {
			if p.State == Failed {
				r.leave(p)
			}
			delete(r.Pods, name)
		}
		return Plan(r, x.step(cands), inputID, false, now)
	}
	r.Phase, r.SettledBy, r.UpdatedAt, x.FinishedAt = Completed, inputID, now, now
	r.Sync = &Sync{Step: "done", Result: events.TemplateNone, Note: "a restart leaves the template as it is"}
	return nil
}
