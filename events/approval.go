package events

import "time"

// ApprovalData (upgrade.approval.requested, upgrade.approval.expired) is a
// rollout held for an approver.
type ApprovalData struct {
	UpgradeID string    `json:"upgradeID"`
	Workload  ObjectRef `json:"workload"`
	// Target is the pushed reference the rollout would move to.
	Target string `json:"target"`
	// Why says which policy asks for approval ("2.0.0 is a new major
	// (from 1.4.0), inplace.dev/approval: major").
	Why         string    `json:"why"`
	RequestedAt time.Time `json:"requestedAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
	// Reason and Message say how it ended (expired).
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Validate implements Validator.
func (d ApprovalData) Validate() error {
	if d.UpgradeID == "" {
		return fieldErr("data.upgradeID", "required")
	}
	if d.Target == "" {
		return fieldErr("data.target", "required")
	}
	return d.Workload.validate("data.workload")
}

// DecisionData (upgrade.approved, upgrade.rejected) is an approver's
// decision on one rollout awaiting approval. It is a claim like any other
// input: compute-spec acts on it only when the rollout record shows that
// very upgrade waiting, and its authority is whoever may publish on the
// subject (the approver identity of the bus).
type DecisionData struct {
	UpgradeID string    `json:"upgradeID"`
	Workload  ObjectRef `json:"workload"`
	// By names who decided (recorded, shown in inplace status).
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

// Validate implements Validator.
func (d DecisionData) Validate() error {
	if d.UpgradeID == "" {
		return fieldErr("data.upgradeID", "required")
	}
	if d.By == "" {
		return fieldErr("data.by", "required: who decides")
	}
	return d.Workload.validate("data.workload")
}
