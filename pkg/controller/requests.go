package controller

import (
	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// requestResult is the event that says how a request rollout (a restart,
// a resize) ended, completed or halted: its kind's succeeded or failed.
func requestResult(in cloudevents.Event, r *rollout.Rollout, x rollout.Request, halted bool) (cloudevents.Event, error) {
	typ, d := x.Result(r, halted)
	e, err := events.Follow(in, events.DeriveID(x.ID(), typ, ""), typ, events.Source(Name), r.Workload.String(), d)
	if err != nil {
		return e, settle.Permanent(err)
	}
	e.SetExtension(events.ExtUpgradeID, x.ID())
	return e, nil
}
