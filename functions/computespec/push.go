package computespec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// errOlder: the push is not newer than the rollout in progress.
var errOlder = errors.New("not newer than the rollout in progress")

// errBackwards: the push would take the workload back to what it left.
var errBackwards = errors.New("refused: never backwards")

// onPush takes a registry's push (image.pushed): a request with none of
// the operator's fields, which an image.pushed may not carry.
func (f *Function) onPush(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	if fields := events.OperatorFields(in.Data()); len(fields) > 0 {
		return nil, f.refuseOperatorFields(in, fields)
	}
	push, err := events.As[events.ImagePushedData](in)
	if err != nil {
		return nil, err
	}
	return f.upgrade(ctx, in, events.UpgradeRequestData{ImagePushedData: push})
}

// onRequest takes an operator's upgrade.requested (`inplace upgrade`,
// `inplace undo`): one workload, maybe going back on purpose.
func (f *Function) onRequest(ctx context.Context, in cloudevents.Event) ([]cloudevents.Event, error) {
	req, err := events.As[events.UpgradeRequestData](in)
	if err != nil {
		return nil, err
	}
	return f.upgrade(ctx, in, req)
}

// upgrade starts (or supersedes) a rollout on every workload the push
// concerns and emits the first wave of each.
func (f *Function) upgrade(ctx context.Context, in cloudevents.Event, push events.UpgradeRequestData) ([]cloudevents.Event, error) {
	if err := controller.ReplayStarts(in); err != nil {
		return nil, err
	}
	targets, err := Discover(f.d.Cache, f.d.Defaults.Load(), push)
	if err != nil {
		if push.Target != nil {
			return nil, settle.Permanent(wrap("manual upgrade", err))
		}
		return nil, wrap("discover", err)
	}
	var outs []cloudevents.Event
	var later error
	var refused []string
	for _, t := range targets {
		log := f.d.Log.With("event", in.ID(), "workload", t.Workload.Ref.String(), "push", push.Ref())
		if t.Skip != "" {
			log.Info("push leaves workload alone", "why", t.Skip)
			if err := f.ro.Forget(ctx, t); err != nil {
				return nil, err
			}
			continue
		}
		if t.AnalysisErr != nil { // never rolled out without the analysis it asks for
			refused = append(refused, f.refuse(t, push, t.AnalysisErr))
			continue
		}
		more, err := f.start(ctx, in, push, t)
		switch {
		case errors.Is(err, errOlder):
			log.Info("push ignored", "why", err)
		case errors.Is(err, errBackwards), errors.Is(err, planner.ErrUndo):
			refused = append(refused, f.refuse(t, push, err))
		case errors.Is(err, errSignature):
			why := f.refuse(t, push, err)
			if rerr := f.recordRefusal(ctx, in, t, push, err.Error()); rerr != nil {
				return nil, rerr
			}
			refused = append(refused, why)
		case err != nil:
			if k, _ := settle.Classify(err); k != settle.Later {
				return nil, err
			}
			later = err
		}
		outs = append(outs, more...)
	}
	if later != nil {
		// Outputs are re-derived from the state on redelivery.
		return nil, later
	}
	if len(outs) == 0 && len(refused) > 0 {
		return nil, settle.Permanentf("compute-spec: push %s refused: %s", push.Ref(), strings.Join(refused, "; "))
	}
	return outs, nil
}

// errSyncing: the workload's previous rollout is syncing its template;
// the push waits for the record to change.
var errSyncing = fmt.Errorf("%w: the previous rollout's template sync is under way", controller.ErrRecordBusy)

// start begins the rollout of push on one target. While the previous
// rollout syncs the template, it waits for that record's next change (the
// watch of the records), then looks again.
func (f *Function) start(ctx context.Context, in cloudevents.Event, push events.UpgradeRequestData, t controller.Target) ([]cloudevents.Event, error) {
	return f.ro.WhenRecordFree(ctx, rollout.Key(t.Workload.Ref), func() ([]cloudevents.Event, error) {
		return f.startOnce(ctx, in, push, t)
	})
}

// startOnce begins the rollout of push on one target.
func (f *Function) startOnce(ctx context.Context, in cloudevents.Event, push events.UpgradeRequestData, t controller.Target) ([]cloudevents.Event, error) {
	ref := t.Workload.Ref
	upgradeID := events.DeriveUpgradeID(in.ID(), ref)
	dates, err := f.backwards(ctx, t, upgradeID, push)
	if err != nil {
		return nil, err
	}
	pods, err := f.d.Cache.PodsOf(ref)
	if err != nil {
		return nil, wrap("pods of "+ref.String(), err)
	}
	cands := planner.Candidates(ref.Kind, pods, push, t.Options.Policy)
	if !planner.NeedsWork(cands) {
		f.d.Log.Info("every pod already runs the push", "workload", ref.String(), "push", push.Ref())
		return nil, nil
	}
	// The signature is checked before anything is written.
	signer, err := f.signer(ctx, in, t, push)
	if err != nil {
		return nil, err
	}
	if err := f.ro.Allow(ctx, pods); err != nil {
		return nil, err
	}
	view, err := f.ro.ViewPulls(cands)
	if err != nil {
		return nil, err
	}
	now, why := f.d.Now(), approvalWhy(t, push, cands)
	timeout := f.d.Defaults.Load().PrepullTimeout
	ttl := f.d.Defaults.Load().ApprovalTimeout
	var r *rollout.Rollout
	var planned []*rollout.Pod
	_, err = f.d.Store.Update(ctx, rollout.Key(ref), func(old []byte) ([]byte, error) {
		prev, err := controller.Decode(old)
		if err != nil {
			return nil, err
		}
		if err := canBegin(prev, ref, upgradeID, t.Options.Policy, push, dates, f.ro.Recheck()); err != nil {
			return nil, err
		}
		r = rollout.Begin(prev, upgradeID, ref, push, t.RolloutOptions(), now)
		if prev == nil || prev.UpgradeID != upgradeID {
			r.Signer, r.TraceParent = signer, events.Ext(in, events.ExtTraceParent)
			r.Analysis = t.RolloutAnalysis()
		}
		switch {
		case prev != nil && prev.UpgradeID == upgradeID:
		case why != "":
			// The history moves when an approver says so.
			rollout.AwaitApproval(r, why, in.ID(), ttl, now)
		default:
			r.History[push.Name()] = rollout.Advance(r.History[push.Name()], push.ImagePushedData, cands)
		}
		planned = rollout.Plan(r, controller.HoldPulling(view, r, cands, timeout, now), in.ID(), false, now)
		rollout.Settle(r, in.ID(), now)
		return json.Marshal(r)
	})
	if err != nil {
		return nil, err
	}
	if r.Phase == rollout.AwaitingApproval && r.Approval.RequestedBy == in.ID() {
		f.d.Log.Info("rollout awaits approval", "workload", ref.String(), "upgrade", upgradeID, "why", why)
		f.ro.EventOn(t.Workload, corev1.EventTypeNormal, controller.EventApprovalRequired,
			"Upgrade %s to %s waits for approval until %s: %s (inplace approve %s -n %s)", upgradeID, push.Ref(),
			r.Approval.ExpiresAt.UTC().Format(time.RFC3339), why, upgradeID, ref.Namespace)
	}
	return f.ro.Advance(ctx, in, r, planned)
}

// canBegin checks that a push may start a rollout after prev: never
// backwards (unless an operator's request says so), and newer than a
// rollout it would supersede. dates are the creation times backwards read.
func canBegin(prev *rollout.Rollout, ref events.ObjectRef, upgradeID string, pol policy.Policy, push events.UpgradeRequestData,
	dates rollout.Dates, recheck time.Duration) error {
	if err := planner.CheckUndo(prev, ref, upgradeID, push); err != nil {
		return err
	}
	if prev == nil || prev.UpgradeID == upgradeID {
		return nil
	}
	if why := rollout.Backwards(prev.History[push.Name()], push.ImagePushedData, dates); why != "" && !push.AllowOlder {
		return fmt.Errorf("%w: %s", errBackwards, why)
	}
	return canSupersede(prev, pol, push, recheck)
}

// backwards refuses a push that would take the workload back (or an undo
// the record does not bear out), before anything else is looked at: the
// refusal names the reason even when the policy would leave every pod
// alone anyway. A push without a time is dated by its registry first; the
// dates are returned for canBegin.
func (f *Function) backwards(ctx context.Context, t controller.Target, upgradeID string, push events.UpgradeRequestData) (rollout.Dates, error) {
	ref := t.Workload.Ref
	raw, _, err := f.d.Store.Get(ctx, rollout.Key(ref))
	if err != nil {
		return nil, err
	}
	prev, err := controller.Decode(raw)
	if err != nil {
		return nil, err
	}
	if err := planner.CheckUndo(prev, ref, upgradeID, push); err != nil {
		return nil, err
	}
	if prev == nil || prev.UpgradeID == upgradeID || push.AllowOlder {
		return nil, nil
	}
	h := prev.History[push.Name()]
	dates, err := f.dates(ctx, t, h, push.ImagePushedData)
	if err != nil {
		return nil, err
	}
	if why := rollout.Backwards(h, push.ImagePushedData, dates); why != "" {
		return nil, fmt.Errorf("%w: %s", errBackwards, why)
	}
	return dates, nil
}

// canSupersede checks that a push may replace the rollout in prev.
func canSupersede(prev *rollout.Rollout, pol policy.Policy, push events.UpgradeRequestData, recheck time.Duration) error {
	if prev.Phase.Finished() {
		return nil
	}
	if prev.Phase == rollout.Syncing {
		return fmt.Errorf("%w: %w", errSyncing, settle.NotYet(recheck, "the template of %s is being synced for %s", prev.Workload, prev.UpgradeID))
	}
	d := policy.Decide(pol, policy.Current{Tag: prev.Push.Tag, Digest: prev.Push.Digest},
		policy.Pushed{Tag: push.Tag, Digest: push.Digest})
	if !d.Upgrade {
		return fmt.Errorf("%w: %s: %s", errOlder, prev.Target(), d.Reason)
	}
	return nil
}

// approvalWhy says why the push waits for an approver on this workload, or
// "": the workload's approval mode (its annotation or config-inplace's)
// applied to each container the push would move, from the tag it runs.
func approvalWhy(t controller.Target, push events.UpgradeRequestData, cands []rollout.Candidate) string {
	if push.Undo != "" {
		return "" // an operator's own undo, checked against the record
	}
	for _, c := range cands {
		for _, cp := range c.Containers {
			from, _ := imageref.Parse(cp.FromImage)
			if why := policy.NeedsApproval(t.Options.Approval, from.Tag, push.Tag); why != "" {
				return why
			}
		}
	}
	return ""
}
