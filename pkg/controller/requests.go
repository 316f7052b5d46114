package controller

import (
	"fmt"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// restartResult is container.restart.succeeded or .failed for a restart
// rollout that ended (completed or halted).
func restartResult(in cloudevents.Event, r *rollout.Rollout, halted bool) (cloudevents.Event, error) {
	x := r.Restart
	d := events.RestartResultData{RequestID: x.RequestID, Target: r.Workload, Containers: x.Containers,
		Strategy: x.Strategy, Counts: r.Counts(), Reason: r.Reason, Message: r.Message}
	typ := events.ContainerRestartSucceeded
	if halted || d.Counts.Failed > 0 {
		typ = events.ContainerRestartFailed
		if d.Reason == "" {
			d.Reason = "RestartFailed"
			d.Message = fmt.Sprintf("%d of %d pods failed (failurePolicy Ignore)", d.Counts.Failed, d.Counts.Pods)
		}
	}
	e, err := events.Follow(in, events.DeriveID(x.RequestID, typ, ""), typ, events.Source(Name), r.Workload.String(), d)
	if err != nil {
		return e, settle.Permanent(err)
	}
	e.SetExtension(events.ExtUpgradeID, x.RequestID)
	return e, nil
}

// resizeResult is container.resize.succeeded or .failed for a resize
// rollout that ended (completed or halted).
func resizeResult(in cloudevents.Event, r *rollout.Rollout, halted bool) (cloudevents.Event, error) {
	x := r.Resize
	d := events.ResizeResultData{RequestID: x.RequestID, Target: r.Workload, Containers: x.Containers, CPU: x.CPU, Memory: x.Memory,
		Counts: r.Counts(), Reason: r.Reason, Message: r.Message}
	if r.Sync != nil && !halted {
		d.Template = r.Sync.Result
	}
	typ := events.ContainerResizeSucceeded
	if halted || d.Counts.Failed > 0 || d.Counts.RolledBack > 0 {
		typ = events.ContainerResizeFailed
		if d.Reason == "" {
			d.Reason = "ResizeFailed"
			d.Message = fmt.Sprintf("%d of %d pods failed, %d resized back", d.Counts.Failed, d.Counts.Pods, d.Counts.RolledBack)
		}
	}
	e, err := events.Follow(in, events.DeriveID(x.RequestID, typ, ""), typ, events.Source(Name), r.Workload.String(), d)
	if err != nil {
		return e, settle.Permanent(err)
	}
	e.SetExtension(events.ExtUpgradeID, x.RequestID)
	return e, nil
}
