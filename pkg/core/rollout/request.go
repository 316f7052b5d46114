package rollout

import (
	"fmt"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Request is a kind of request a rollout carries out on a workload's pods
// instead of moving them to a push: a restart or a resize. What every kind
// shares lives here (beginning, one decision at a time per pod, settling
// once every pod is done); a kind's file keeps what is its own: its record
// (a field of Rollout), how it names what it does, what its plans carry,
// how it ends, and the event that says so.
type Request interface {
	// ID is the request's id on the workload (the rollout's first upgrade id).
	ID() string
	// Target is how the rollout names what it does ("restart app").
	Target() string
	// Mark puts the kind's marker on a plan (and so on the pod's state).
	Mark(plan *events.Plan)
	// Result is the type and data of the event that says how the request
	// ended (completed, or halted).
	Result(r *Rollout, halted bool) (typ string, data any)
	// step keeps of the candidates what the current step plans.
	step(cands []Candidate) []Candidate
	// settle ends the request once every pod is done; it returns the pods
	// planned for a next step, if any.
	settle(r *Rollout, cands []Candidate, inputID string, now time.Time) []*Pod
	// attach sets the request on a new rollout.
	attach(r *Rollout)
}

var (
	_ Request = (*Restart)(nil)
	_ Request = (*Resize)(nil)
)

// Request is the request the rollout carries out; nil for a push.
func (r *Rollout) Request() Request {
	switch {
	case r.Restart != nil:
		return r.Restart
	case r.Resize != nil:
		return r.Resize
	}
	return nil
}

// ErrBusy: the workload has a rollout in progress; a request waits for it.
var ErrBusy = fmt.Errorf("a rollout is in progress")

// BeginRequest starts request x on a workload. A redelivered request
// returns prev as is; an unfinished rollout of anything else makes it
// wait (ErrBusy): one decision at a time per pod.
func BeginRequest(prev *Rollout, x Request, w events.ObjectRef, opts Options, now time.Time) (*Rollout, error) {
	if prev != nil && prev.Request() != nil && prev.Request().ID() == x.ID() {
		return prev, nil
	}
	if prev != nil && !prev.Phase.Finished() && prev.Phase != Halted {
		return nil, fmt.Errorf("%w: %s is %s", ErrBusy, prev.UpgradeID, prev.Phase)
	}
	r := &Rollout{
		UpgradeID: x.ID(), Workload: w, Phase: Running, Options: opts,
		Pods: map[string]*Pod{}, StartedAt: now, UpdatedAt: now, ProgressAt: now, History: map[string]History{},
	}
	x.attach(r)
	if prev != nil {
		for repo, h := range prev.History {
			r.History[repo] = h
		}
		r.Push = prev.Push
		r.LastMoved = lastMoved(prev)
		r.Carried = carry(prev)
	}
	return r, nil
}

// StepCandidates keeps of the candidates what the request's current step
// plans (all of them for a push).
func StepCandidates(r *Rollout, cands []Candidate) []Candidate {
	if x := r.Request(); x != nil {
		return x.step(cands)
	}
	return cands
}

// SettleRequest ends a request whose pods are all done, as its kind says
// (a next step, the template sync, or Completed); it returns the pods
// planned for a next step. A push, or a rollout with pods still to do, is
// left as it is.
func SettleRequest(r *Rollout, cands []Candidate, inputID string, now time.Time) []*Pod {
	x := r.Request()
	if x == nil || r.Phase != Running {
		return nil
	}
	for _, p := range r.Pods {
		if p.State == Pending || p.State == InFlight {
			return nil
		}
	}
	return x.settle(r, cands, inputID, now)
}
