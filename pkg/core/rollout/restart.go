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

// Current are the containers restarted in the current step.
func (x *Restart) Current() []string {
	if x.Strategy.OrderedRecreate && x.Step < len(x.Containers) {
		return x.Containers[x.Step : x.Step+1]
	}
	return x.Containers
}

// Target is how the rollout names what it does ("restart app,sidecar").
func (x *Restart) Target() string { return "restart " + strings.Join(x.Current(), ",") }

// Plan is what every upgrade.planned of the restart carries.
func (x *Restart) Plan() *events.RestartPlan {
	return &events.RestartPlan{RequestID: x.RequestID, Strategy: x.Strategy, Reason: x.Reason}
}

// StepID is the upgrade id of a step: the request's for the first, then
// "<request>-<n>", so each step's plans have ids of their own.
func (x *Restart) StepID() string {
	if x.Step == 0 {
		return x.RequestID
	}
	return fmt.Sprintf("%s-%d", x.RequestID, x.Step+1)
}

// ErrBusy: the workload has a rollout in progress; a restart waits for it.
var ErrBusy = fmt.Errorf("a rollout is in progress")

// BeginRestart starts the restart request on a workload. A redelivered
// request returns prev as is; an unfinished rollout of anything else makes
// it wait (ErrBusy): one decision at a time per pod.
func BeginRestart(prev *Rollout, id string, w events.ObjectRef, req events.RestartRequestData, opts Options, now time.Time) (*Rollout, error) {
	if prev != nil && prev.Restart != nil && prev.Restart.RequestID == id {
		return prev, nil
	}
	if prev != nil && !prev.Phase.Finished() && prev.Phase != Halted {
		return nil, fmt.Errorf("%w: %s is %s", ErrBusy, prev.UpgradeID, prev.Phase)
	}
	r := &Rollout{
		UpgradeID: id, Workload: w, Phase: Running, Options: opts,
		Pods: map[string]*Pod{}, StartedAt: now, UpdatedAt: now, ProgressAt: now, History: map[string]History{},
		Restart: &Restart{RequestID: id, Containers: req.Containers, Strategy: req.Strategy, Reason: req.Reason},
	}
	if prev != nil {
		for repo, h := range prev.History {
			r.History[repo] = h
		}
		r.Push = prev.Push
		r.LastMoved = lastMoved(prev)
	}
	return r, nil
}

// StepCandidates keeps, with orderedRecreate, only the current step's
// container of each candidate.
func StepCandidates(r *Rollout, cands []Candidate) []Candidate {
	if r.Restart == nil || !r.Restart.Strategy.OrderedRecreate {
		return cands
	}
	want := r.Restart.Current()
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

// SettleRestart ends a restart whose pods are all done: the next step of
// an ordered restart (its pods planned anew from cands), or Completed. The
// template is left as it is: it keeps its stable reference. It returns the
// pods planned for a next step.
func SettleRestart(r *Rollout, cands []Candidate, inputID string, now time.Time) []*Pod {
	if r.Restart == nil || r.Phase != Running {
		return nil
	}
	for _, p := range r.Pods {
		if p.State == Pending || p.State == InFlight {
			return nil
		}
	}
	x := r.Restart
	if x.Strategy.OrderedRecreate && x.Step+1 < len(x.Containers) {
		x.Step++
		r.UpgradeID = x.StepID()
		for name, p := range r.Pods {
			if p.State == Failed {
				r.leave(p)
			}
			delete(r.Pods, name)
		}
		return Plan(r, StepCandidates(r, cands), inputID, false, now)
	}
	r.Phase, r.SettledBy, r.UpdatedAt, x.FinishedAt = Completed, inputID, now, now
	r.Sync = &Sync{Step: "done", Result: events.TemplateNone, Note: "a restart leaves the template as it is"}
	return nil
}
