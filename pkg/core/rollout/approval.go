package rollout

import (
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Approval decisions.
const (
	Approved = "Approved"
	// ReasonRejected and ReasonApprovalExpired end a rollout that waited
	// for approval.
	ReasonRejected        = "Rejected"
	ReasonApprovalExpired = "ApprovalExpired"
)

// Approval is an approver's part in a rollout.
type Approval struct {
	// Why says which policy asks (policy.NeedsApproval).
	Why         string    `json:"why"`
	RequestedAt time.Time `json:"requestedAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
	// RequestedBy is the id of the input whose handling asked, so that a
	// redelivered input asks with the same event.
	RequestedBy string `json:"requestedBy,omitempty"`
	// Decision is Approved, ReasonRejected or ReasonApprovalExpired once
	// decided; By and Reason are the approver's.
	Decision  string    `json:"decision,omitempty"`
	By        string    `json:"by,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	DecidedAt time.Time `json:"decidedAt,omitzero"`
	// DecidedBy is the id of the decision's input (or the watchdog's).
	DecidedBy string `json:"decidedBy,omitempty"`
}

// AwaitApproval holds a new rollout for an approver until ttl from now:
// nothing is planned and the workload's history does not move until
// Approve. Pods a superseded rollout has in flight still finish.
func AwaitApproval(r *Rollout, why, inputID string, ttl time.Duration, now time.Time) {
	r.Phase = AwaitingApproval
	r.Approval = &Approval{Why: why, RequestedAt: now, ExpiresAt: now.Add(ttl), RequestedBy: inputID}
}

// Approve lets a rollout awaiting approval run: the workload's history
// moves to the push (cands are its pods now), and the next Plan plans. It
// reports whether r was awaiting approval.
func Approve(r *Rollout, by, reason, inputID string, cands []Candidate, now time.Time) bool {
	if r.Phase != AwaitingApproval || r.Approval == nil {
		return false
	}
	r.Phase, r.UpdatedAt, r.ProgressAt = Running, now, now
	r.Approval.Decision, r.Approval.By, r.Approval.Reason, r.Approval.DecidedAt, r.Approval.DecidedBy =
		Approved, by, reason, now, inputID
	if r.Analysis != nil {
		r.Analysis.approved(by, now)
	}
	if r.History == nil {
		r.History = map[string]History{}
	}
	r.History[r.Push.Name()] = Advance(r.History[r.Push.Name()], r.Push.ImagePushedData, cands)
	return true
}

// Reject ends a rollout awaiting approval (reason ReasonRejected, or
// ReasonApprovalExpired for the watchdog); nothing was planned. It reports
// whether r was awaiting approval.
func Reject(r *Rollout, reason, by, message, inputID string, now time.Time) bool {
	if r.Phase != AwaitingApproval || r.Approval == nil {
		return false
	}
	r.Phase, r.Reason, r.Message, r.UpdatedAt = Rejected, reason, message, now
	r.Approval.Decision, r.Approval.By, r.Approval.Reason, r.Approval.DecidedAt, r.Approval.DecidedBy =
		reason, by, message, now, inputID
	return true
}

// ApprovalData is the approval of r as an event's data.
func (r *Rollout) ApprovalData() events.ApprovalData {
	d := events.ApprovalData{UpgradeID: r.UpgradeID, Workload: r.Workload, Target: r.Target()}
	if a := r.Approval; a != nil {
		d.Why, d.RequestedAt, d.ExpiresAt = a.Why, a.RequestedAt, a.ExpiresAt
		if a.Decision != "" && a.Decision != Approved {
			d.Reason, d.Message = a.Decision, r.Message
		}
	}
	return d
}
