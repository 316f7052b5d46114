package fleet

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Record is the hub's durable view of one push through the fleet: the
// value of the push's key in the hub's fleet bucket.
type Record struct {
	// Push is the pushed event's id: every member's rollouts of it derive
	// their upgrade ids from it (events.DeriveUpgradeID).
	Push string `json:"push"`
	// Target is the pushed reference, for people.
	Target string `json:"target"`
	// Event is the push as released to the members (a CloudEvent, JSON).
	Event []byte `json:"event"`
	// Policy is the policy the push started under; a later change of the
	// hub's policy does not reorder a push under way.
	Policy    Policy    `json:"policy"`
	StartedAt time.Time `json:"startedAt"`
	// Released are the stages whose clusters the push was published to,
	// by name, with when.
	Released map[string]time.Time `json:"released,omitempty"`
	// Sent are the clusters the push was published to, with when: a
	// stage's release records each cluster as it is published, and the
	// stage once all are.
	Sent map[string]time.Time `json:"sent,omitempty"`
	// Approved are the stages an approver let start, by name.
	Approved map[string]Gate `json:"approved,omitempty"`
	// Analysis are the analysis verdicts given for stages, by name.
	Analysis map[string]Gate `json:"analysis,omitempty"`
	// Halt, once set, stops the fleet: no stage starts again.
	Halt *Halt `json:"halt,omitempty"`
	// Members are each cluster's last reported rollouts, by cluster.
	Members map[string]Member `json:"members,omitempty"`
}

// Gate is an approval or an analysis verdict of a stage.
type Gate struct {
	// Verdict is Passed or Failed (an approval is always Passed).
	Verdict string    `json:"verdict"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at"`
}

// Verdicts of a Gate.
const (
	Pass = "Passed"
	Fail = "Failed"
)

// Halt says where and why the fleet stopped.
type Halt struct {
	Stage    string    `json:"stage"`
	Cluster  string    `json:"cluster,omitempty"`
	Workload string    `json:"workload,omitempty"`
	Reason   string    `json:"reason"`
	Message  string    `json:"message,omitempty"`
	At       time.Time `json:"at"`
}

// Member is one cluster's rollouts of the push, by workload.
type Member struct {
	Rollouts map[string]Outcome `json:"rollouts"`
}

// State of a member's rollout as reported.
type State string

const (
	// Succeeded: rollout.completed with no pod failed or rolled back.
	Succeeded State = "Succeeded"
	// Failed: rollout.completed with a pod failed or rolled back.
	Failed State = "Failed"
	// Halted: rollout.halted.
	Halted State = "Halted"
)

// Outcome is one reported rollout outcome of a member.
type Outcome struct {
	UpgradeID string `json:"upgradeID"`
	State     State  `json:"state"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// Analysis is the verdict of the rollout's own canary analysis as the
	// member reported it (events.RolloutData.Analysis): Passed, Failed,
	// Inconclusive, or empty for a rollout that ran none.
	Analysis string `json:"analysis,omitempty"`
	// Event is the id of the report's event; At its time (the member's
	// clock): a report older than the one kept changes nothing.
	Event string    `json:"event"`
	At    time.Time `json:"at"`
	// ReceivedAt is when the hub took it.
	ReceivedAt time.Time `json:"receivedAt"`
}

// Bad reports whether the outcome halts the fleet.
func (s State) Bad() bool { return s == Failed || s == Halted }

// NewRecord begins the record of a push under policy.
func NewRecord(push, target string, event []byte, p Policy, now time.Time) *Record {
	return &Record{Push: push, Target: target, Event: event, Policy: p, StartedAt: now}
}

// ErrNotApprovable: a stage an approver cannot decide on now.
var ErrNotApprovable = errors.New("not awaiting approval")

// Approvable says why an approver cannot decide on stage of r now, or nil:
// the stage must be in the push's policy and ask for an approval, not be
// released yet, and the fleet must not be halted.
func Approvable(r *Record, stage string) error {
	i := slices.IndexFunc(r.Policy.Stages, func(s Stage) bool { return s.Name == stage })
	d := Decide(r)
	switch {
	case i < 0:
		return fmt.Errorf("stage %q: not in the push's policy: %w", stage, ErrNotApprovable)
	case !r.Policy.Stages[i].Approval:
		return fmt.Errorf("stage %q: its policy asks for no approval: %w", stage, ErrNotApprovable)
	case d.Halt != nil:
		return fmt.Errorf("stage %q: the fleet halted in %s (%s): %w", stage, d.Halt.Stage, d.Halt.Reason, ErrNotApprovable)
	case d.Stages[i].State != AwaitingApproval && d.Stages[i].State != Pending:
		return fmt.Errorf("stage %q: %s: %w", stage, d.Stages[i].State, ErrNotApprovable)
	}
	return nil
}
