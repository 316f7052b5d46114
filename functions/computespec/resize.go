package computespec

import (
	"context"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// EventResizeRequested is the reason of the Event on a workload whose
// resize request was taken on.
const EventResizeRequested = "InPlaceResizeRequested"

// onResize starts a resize request: each named container goes from the
// resources it asks now to the request's.
func (f *Function) onResize(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	req, err := events.As[events.ResizeRequestData](in)
	if err != nil {
		return nil, err
	}
	if _, err := resize.Parse(req.CPU, req.Memory); err != nil {
		return nil, settle.Permanentf("compute-spec: resize of %s: %v", req.Target, err)
	}
	return f.onContainers(ctx, in, containerRequest{
		what: "resize", target: req.Target, containers: req.Containers, id: events.DeriveResizeID,
		record:  func(id string) rollout.Request { return rollout.NewResize(id, req) },
		options: func(t controller.Target) rollout.Options { return resizeOptions(t, req) },
		reason:  EventResizeRequested, verb: "Resizing", toTarget: true,
	})
}

// resizeOptions are a resize's rollout settings: the workload's budget and
// verify deadline (or the request's); no grace, no pre-pull (nothing is
// pulled, the container keeps running).
func resizeOptions(t controller.Target, req events.ResizeRequestData) rollout.Options {
	o := t.RolloutOptions()
	o.GraceSeconds, o.Prepull = 0, false
	if req.DeadlineSeconds > 0 {
		o.VerifySeconds = req.DeadlineSeconds
	}
	return o
}
