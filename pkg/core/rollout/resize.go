package rollout

import (
	"fmt"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Resize is a rollout that changes containers' CPU and memory in place
// (container.resize.requested) instead of moving them to a push.
type Resize struct {
	RequestID  string   `json:"requestID"`
	Containers []string `json:"containers"`
	CPU        string   `json:"cpu,omitempty"`
	Memory     string   `json:"memory,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	// FinishedAt is when the request ended.
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// NewResize is the record of resize request id.
func NewResize(id string, req events.ResizeRequestData) *Resize {
	return &Resize{RequestID: id, Containers: req.Containers, CPU: req.CPU, Memory: req.Memory, Reason: req.Reason}
}

// ID implements Request.
func (x *Resize) ID() string { return x.RequestID }

// Target is how the rollout names what it does ("resize app cpu 500m").
func (x *Resize) Target() string {
	s := "resize " + strings.Join(x.Containers, ",")
	if x.CPU != "" {
		s += " cpu " + x.CPU
	}
	if x.Memory != "" {
		s += " memory " + x.Memory
	}
	return s
}

// Mark implements Request: every upgrade.planned of the resize carries it.
func (x *Resize) Mark(plan *events.Plan) {
	plan.Resize = &events.ResizePlan{RequestID: x.RequestID, Reason: x.Reason}
}

// Result implements Request: container.resize.succeeded, or .failed when
// it halted or left pods failed or resized back.
func (x *Resize) Result(r *Rollout, halted bool) (string, any) {
	d := events.ResizeResultData{RequestID: x.RequestID, Target: r.Workload, Containers: x.Containers, CPU: x.CPU, Memory: x.Memory,
		Counts: r.Counts(), Reason: r.Reason, Message: r.Message}
	if r.Sync != nil && !halted {
		d.Template = r.Sync.Result
	}
	if !halted && d.Counts.Failed == 0 && d.Counts.RolledBack == 0 {
		return events.ContainerResizeSucceeded, d
	}
	if d.Reason == "" {
		d.Reason = "ResizeFailed"
		d.Message = fmt.Sprintf("%d of %d pods failed, %d resized back", d.Counts.Failed, d.Counts.Pods, d.Counts.RolledBack)
	}
	return events.ContainerResizeFailed, d
}

func (x *Resize) step(cands []Candidate) []Candidate { return cands }

func (x *Resize) attach(r *Rollout) { r.Resize = x }

// settle moves a resize whose pods are all done to Syncing, so the
// template follows the pods' new resources (as it follows a push's images);
// one that resized no pod completes with the template as it is.
func (x *Resize) settle(r *Rollout, _ []Candidate, inputID string, now time.Time) []*Pod {
	r.SettledBy, r.UpdatedAt = inputID, now
	if r.Idle() {
		r.Phase, x.FinishedAt = Completed, now
		r.Sync = &Sync{Step: "done", Result: events.TemplateNone, Note: "no pod needed resizing"}
		return nil
	}
	r.Phase = Syncing
	return nil
}
