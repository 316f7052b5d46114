package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Kubernetes Event reasons of the approval gate, on the workload.
const (
	EventApprovalRequired = "InPlaceApprovalRequired"
	EventApproved         = "InPlaceApproved"
	EventRejected         = "InPlaceRejected"
	EventApprovalExpired  = "InPlaceApprovalExpired"
)

// approvalRequested is upgrade.approval.requested for r, when the handling
// of in asked for it; its id depends on the upgrade alone.
func approvalRequested(in cloudevents.Event, r *rollout.Rollout) ([]cloudevents.Event, error) {
	if r.Phase != rollout.AwaitingApproval || r.Approval == nil || r.Approval.RequestedBy != in.ID() {
		return nil, nil
	}
	e, err := approvalEvent(in, r, events.UpgradeApprovalRequested)
	if err != nil {
		return nil, err
	}
	return []cloudevents.Event{e}, nil
}

func approvalEvent(in cloudevents.Event, r *rollout.Rollout, typ string) (cloudevents.Event, error) {
	e, err := events.Follow(in, events.DeriveID(r.UpgradeID, typ, ""), typ, events.Source(Name), r.Workload.String(), r.ApprovalData())
	if err != nil {
		return e, settle.Permanent(err)
	}
	e.SetExtension(events.ExtUpgradeID, r.UpgradeID)
	return e, nil
}

// onDecision applies an approver's decision (upgrade.approved or
// upgrade.rejected). The decision is a claim: it is acted on only when the
// rollout record shows that very upgrade awaiting approval, not expired,
// and (to approve) the workload still opted in and not paused; otherwise it
// is dead-lettered with the reason. A replayed decision decides nothing
// unless the replay asks to start rollouts.
func (ctl *Rollouts) onDecision(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	d, err := events.As[events.DecisionData](in)
	if err != nil {
		return nil, err
	}
	if err := ReplayStarts(in); err != nil {
		return nil, err
	}
	raw, rev, err := ctl.d.Store.Get(ctx, rollout.Key(d.Workload))
	if err != nil {
		return nil, err
	}
	cur, err := Decode(raw)
	if err != nil {
		return nil, settle.Permanent(err)
	}
	approve := in.Type() == events.UpgradeApproved
	if err := ctl.canDecide(cur, d, in.ID(), approve); err != nil {
		return nil, settle.Permanent(fmt.Errorf("compute-spec: %s of %s: %w", events.Short(in.Type()), d.UpgradeID, err))
	}
	var cands []rollout.Candidate
	if approve {
		var t Target
		if t, cands, _, err = ctl.observe(ctx, d.Workload, raw, rev); err != nil {
			return nil, err
		}
		if t.Skip != "" {
			return nil, settle.Permanentf("compute-spec: approval of %s: %s: %s; nothing planned (approve again once it may move)",
				d.UpgradeID, d.Workload, t.Skip)
		}
	}
	now := ctl.d.Now()
	outs, err := ctl.decideRecord(ctx, in, d.Workload, func(r *rollout.Rollout) {
		if r.UpgradeID != d.UpgradeID {
			return
		}
		if approve {
			rollout.Approve(r, d.By, d.Reason, in.ID(), cands, now)
		} else {
			rollout.Reject(r, rollout.ReasonRejected, d.By, rejection(d), in.ID(), now)
		}
	})
	if k, _ := settle.Classify(err); (k == settle.Done || k == settle.Later) && cur.Approval.DecidedBy == "" {
		ctl.decided(d, approve) // recorded: a redelivery finds it decided
	}
	return outs, err
}

// decideRecord is transition for a decision: what the decided record
// emits, and, when a rejection ends a rollout whose analysis had moved a
// canary, the undo of that canary.
func (ctl *Rollouts) decideRecord(ctx context.Context, in cloudevents.Event, ref events.ObjectRef, change func(*rollout.Rollout)) ([]cloudevents.Event, error) {
	written, planned, err := ctl.replanRecord(ctx, in, ref, change, false)
	if err != nil || written == nil {
		return nil, err
	}
	outs, err := ctl.Advance(ctx, in, written, planned)
	if err != nil {
		return nil, err
	}
	back, err := ctl.undoCanary(in, written)
	return append(outs, back...), err
}

// canDecide checks a decision against the rollout record: nil when the
// record shows that upgrade awaiting approval (or already decided the same
// way by this very input: a redelivery).
func (ctl *Rollouts) canDecide(cur *rollout.Rollout, d events.DecisionData, inputID string, approve bool) error {
	switch {
	case cur == nil:
		return fmt.Errorf("%s has no rollout", d.Workload)
	case cur.UpgradeID != d.UpgradeID:
		return fmt.Errorf("%s is not the rollout of %s (that is %s, %s)", d.UpgradeID, d.Workload, cur.UpgradeID, cur.Phase)
	case cur.Approval == nil:
		return fmt.Errorf("%s needs no approval", d.UpgradeID)
	case cur.Approval.DecidedBy == inputID:
		return nil
	case cur.Phase != rollout.AwaitingApproval:
		return fmt.Errorf("%s is not awaiting approval (%s %s by %s)", d.UpgradeID, cur.Phase, cur.Approval.Decision, cur.Approval.By)
	case !ctl.d.Now().Before(cur.Approval.ExpiresAt):
		return fmt.Errorf("the approval of %s expired at %s", d.UpgradeID, cur.Approval.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

func rejection(d events.DecisionData) string {
	if d.Reason == "" {
		return "rejected by " + d.By
	}
	return "rejected by " + d.By + ": " + d.Reason
}

// decided records the decision as an Event on the workload.
func (ctl *Rollouts) decided(d events.DecisionData, approve bool) {
	reason, typ, msg := EventApproved, corev1.EventTypeNormal, "Upgrade %s approved by %s"
	if !approve {
		reason, typ, msg = EventRejected, corev1.EventTypeWarning, "Upgrade %s rejected by %s"
	}
	if d.Reason != "" {
		msg += ": " + d.Reason
	}
	ctl.Event(d.Workload, typ, reason, msg, d.UpgradeID, d.By)
}

// Event records a Kubernetes Event on a workload from the cache.
func (ctl *Rollouts) Event(ref events.ObjectRef, typ, reason, format string, args ...any) {
	if ctl.d.Recorder == nil {
		return
	}
	w, ok, err := ctl.d.Cache.Get(ref)
	if err != nil || !ok {
		return
	}
	ctl.EventOn(w, typ, reason, format, args...)
}

func (ctl *Rollouts) EventOn(w kube.Workload, typ, reason, format string, args ...any) {
	if obj, ok := w.Object.(runtime.Object); ok && ctl.d.Recorder != nil {
		ctl.d.Recorder.Eventf(obj, typ, reason, format, args...)
	}
}

// expireApproval ends a rollout nobody approved in time (the watchdog).
func (ctl *Rollouts) expireApproval(ctx context.Context, in cloudevents.Event, r *rollout.Rollout, now time.Time) ([]cloudevents.Event, error) {
	msg := fmt.Sprintf("nobody approved %s → %s by %s (%s)", r.UpgradeID, r.Target(),
		r.Approval.ExpiresAt.UTC().Format(time.RFC3339), r.Approval.Why)
	var expired *rollout.Rollout
	_, err := ctl.d.Store.Update(ctx, rollout.Key(r.Workload), func(old []byte) ([]byte, error) {
		cur, err := Decode(old)
		if err != nil || cur == nil || cur.UpgradeID != r.UpgradeID {
			return nil, errDecided
		}
		if !rollout.Reject(cur, rollout.ReasonApprovalExpired, "watchdog", msg, in.ID(), now) {
			return nil, errDecided
		}
		expired = cur
		return json.Marshal(cur)
	})
	if errors.Is(err, errDecided) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ctl.d.Log.Warn("approval expired", "workload", r.Workload.String(), "upgrade", r.UpgradeID)
	ctl.Event(r.Workload, corev1.EventTypeWarning, EventApprovalExpired, "Upgrade %s to %s: %s", r.UpgradeID, r.Target(), msg)
	e, err := approvalEvent(in, expired, events.UpgradeApprovalExpired)
	if err != nil {
		return nil, err
	}
	back, err := ctl.undoCanary(in, expired)
	return append([]cloudevents.Event{e}, back...), err
}

// errDecided: the rollout was decided (or superseded) meanwhile.
var errDecided = errors.New("decided meanwhile")
