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

// Plan is what every upgrade.planned of the resize carries.
func (x *Resize) Plan() *events.ResizePlan {
	return &events.ResizePlan{RequestID: x.RequestID, Reason: x.Reason}
}

// BeginResize starts the resize request on a workload. A redelivered
// request returns prev as is; an unfinished rollout of anything else makes
// it wait (ErrBusy): one decision at a time per pod.
func BeginResize(prev *Rollout, id string, w events.ObjectRef, req events.ResizeRequestData, opts Options, now time.Time) (*Rollout, error) {
	if prev != nil && prev.Resize != nil && prev.Resize.RequestID == id {
		return prev, nil
	}
	if prev != nil && !prev.Phase.Finished() && prev.Phase != Halted {
		return nil, fmt.Errorf("%w: %s is %s", ErrBusy, prev.UpgradeID, prev.Phase)
	}
	r := &Rollout{
		UpgradeID: id, Workload: w, Phase: Running, Options: opts,
		Pods: map[string]*Pod{}, StartedAt: now, UpdatedAt: now, ProgressAt: now, History: map[string]History{},
		Resize: &Resize{RequestID: id, Containers: req.Containers, CPU: req.CPU, Memory: req.Memory, Reason: req.Reason},
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

// SettleResize moves a resize whose pods are all done to Syncing, so the
// template follows the pods' new resources (as it follows a push's images);
// one that resized no pod completes with the template as it is.
func SettleResize(r *Rollout, inputID string, now time.Time) {
	if r.Resize == nil || r.Phase != Running {
		return
	}
	for _, p := range r.Pods {
		if p.State == Pending || p.State == InFlight {
			return
		}
	}
	r.SettledBy, r.UpdatedAt = inputID, now
	if r.Idle() {
		r.Phase, r.Resize.FinishedAt = Completed, now
		r.Sync = &Sync{Step: "done", Result: events.TemplateNone, Note: "no pod needed resizing"}
		return
	}
	r.Phase = Syncing
}
