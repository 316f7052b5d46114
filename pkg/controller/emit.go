package controller

import (
	"context"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// stallRecheck is how soon a rollout waiting for unavailable pods to become
// Ready, or for its nodes' pulls, looks again by itself: a safety net only.
// In `inplace run` the Waker moves it on at the change itself (a pod
// Ready, a pull done); the watchdog re-plans one left quiet for longer.
const stallRecheck = 30 * time.Second

// Advance turns a rollout transition made while handling in into events:
// the plans it made, its halt, or its completion (after the template sync).
func (ctl *Rollouts) Advance(ctx context.Context, in cloudevents.Event, r *rollout.Rollout, planned []*rollout.Pod) ([]cloudevents.Event, error) {
	outs, err := approvalRequested(in, r)
	if err != nil {
		return nil, err
	}
	if len(planned) > 0 {
		ctl.holdStatefulSet(ctx, r) // before the plans: patch-pod labels pods while it sees the hold
	}
	fold := len(planned) > FoldEventsAbove && r.Request() == nil
	for _, p := range planned {
		e, err := ctl.plannedEvent(in, r, p, fold)
		if err != nil {
			return nil, err
		}
		outs = append(outs, e)
	}
	if fold {
		ctl.Event(r.Workload, corev1.EventTypeNormal, EventUpgrade, "Upgrading %d pods in place to image %q (wave %d)",
			len(planned), r.Target(), planned[0].Wave)
	}
	if r.Phase == rollout.Halted && r.HaltedBy == in.ID() {
		more, err := ctl.endEvents(in, r, events.RolloutHalted)
		if err != nil {
			return nil, err
		}
		outs = append(outs, more...)
	}
	if err := ctl.releaseHalted(ctx, r); err != nil {
		return nil, err
	}
	if r.SettledBy == in.ID() {
		if r.Phase == rollout.Syncing {
			var err error
			if r, err = ctl.syncTemplate(ctx, r); err != nil {
				return nil, err
			}
		}
		more, err := ctl.endEvents(in, r, events.RolloutCompleted)
		if err != nil {
			return nil, err
		}
		outs = append(outs, more...)
		if c := r.Counts(); c.Succeeded > FoldEventsAbove && r.Request() == nil {
			ctl.Event(r.Workload, corev1.EventTypeNormal, EventUpgrade, "Upgraded %d pods in place to image %q", c.Succeeded, r.Target())
		}
	}
	if r.Canaried() {
		ctl.requeue(r.Workload, 0) // its canary is in: the analysis goes on
	}
	if stalled(r) && ctl.d.Records == nil {
		// Without the watches (Knative mode) a stalled rollout polls; with
		// them the Waker moves it on (a pod Ready, a pull done) and the
		// watchdog re-plans one left quiet: the input is done.
		return nil, settle.NotYet(pollRecheck, "%s: pods wait for a free slot (max-unavailable %d) or for their node's pull, and none is in flight",
			r.Workload, r.Options.Budget)
	}
	return outs, nil
}

// stalled: pods wait, nothing is in flight to free a slot, nothing else will
// come to wake the rollout. Unavailable pods may be Ready a moment later.
func stalled(r *rollout.Rollout) bool {
	if r.Phase != rollout.Running || r.Canaried() { // an analysis has deadlines of its own
		return false
	}
	pending := false
	for _, p := range r.Pods {
		switch p.State {
		case rollout.InFlight:
			return false
		case rollout.Pending:
			pending = true
		}
	}
	return pending
}

// plannedEvent is upgrade.planned for one pod. Its id depends only on the
// upgrade, the pod and its try (inplace.StepID), so re-emitting it is
// always deduplicated, and a re-plan (a resumed rollout) is not.
// FoldEventsAbove is the most pods a step plans with a Kubernetes Event on
// each (patch-pod's "Upgrading", verify's "Upgraded"); a larger step
// records one Event on the workload instead, as a rollout of a thousand
// pods would otherwise write two thousand Events beside the kubelet's.
const FoldEventsAbove = 10

// EventUpgrade is the reason of the Events on a workload for its pods'
// upgrade steps (the reason patch-pod and verify give theirs on pods).
const EventUpgrade = "InPlaceUpgrade"

// plannedEvent is p's upgrade.planned; stepEvents: the step's Events are
// one on the workload (Plan.StepEvents).
func (ctl *Rollouts) plannedEvent(in cloudevents.Event, r *rollout.Rollout, p *rollout.Pod, stepEvents bool) (cloudevents.Event, error) {
	plan := events.Plan{
		UpgradeID:       p.UpgradeID,
		Pod:             events.PodRef{Namespace: r.Workload.Namespace, Name: p.Name, UID: p.UID, Node: p.Node},
		Owner:           r.Workload,
		Containers:      p.Containers,
		Target:          r.Target(),
		Wave:            p.Wave,
		GraceSeconds:    r.Options.GraceSeconds,
		Prepull:         r.Options.Prepull,
		ReadinessGate:   p.ReadinessGate,
		VerifySeconds:   r.Options.VerifySeconds,
		MinReadySeconds: r.Options.MinReadySeconds,
		PlannedAt:       r.UpdatedAt,
		Signer:          r.Signer,
		Attempt:         p.Attempt(),
		StepEvents:      stepEvents,
	}
	if x := r.Request(); x != nil {
		x.Mark(&plan)
	}
	e, err := events.Follow(in, inplace.StepID(plan, events.UpgradePlanned), events.UpgradePlanned, events.Source(Name), plan.Pod.String(), plan)
	if err != nil {
		return e, settle.Permanent(err)
	}
	e.SetExtension(events.ExtUpgradeID, plan.UpgradeID)
	return e, nil
}

// templateOutcome reports what became of the template: synced (or already
// showing the target) is the only case that says templateSynced; a sync
// found impossible or left to GitOps is the completion's reason.
func templateOutcome(d *events.RolloutData, s *rollout.Sync) {
	d.Template = &events.TemplateOutcome{Result: s.Result, Reason: s.Reason, Message: s.Note, Images: s.Images}
	switch s.Result {
	case events.TemplateSynced, events.TemplateCurrent:
		d.TemplateSynced = true
		d.PreviousImages = s.PreviousImages
	case events.TemplateNotSynced, events.TemplateLeftToGitOps:
		d.Reason = "Template" + s.Result
	}
	if s.Note != "" {
		d.Message = strings.TrimPrefix(d.Message+"; "+s.Note, "; ")
	}
}

// endEvents is rollout.halted or rollout.completed, and the matching CDEvent.
func (ctl *Rollouts) endEvents(in cloudevents.Event, r *rollout.Rollout, typ string) ([]cloudevents.Event, error) {
	d := events.RolloutData{
		UpgradeID: r.UpgradeID, Workload: r.Workload, Target: r.Target(), Counts: r.Counts(),
		Reason: r.Reason, Message: r.Message,
	}
	if r.Sync != nil && typ == events.RolloutCompleted {
		templateOutcome(&d, r.Sync)
	}
	d.Analysis = analysisOutcome(r, typ)
	id := events.DeriveID(r.UpgradeID, typ, "")
	e, err := events.Follow(in, id, typ, events.Source(Name), r.Workload.String(), d)
	if err != nil {
		return nil, settle.Permanent(err)
	}
	e.SetExtension(events.ExtUpgradeID, r.UpgradeID)
	outs := []cloudevents.Event{e}
	if x := r.Request(); x != nil {
		res, err := requestResult(in, r, x, typ == events.RolloutHalted)
		if err != nil {
			return nil, err
		}
		return append(outs, res), nil
	}
	defaults := ctl.d.Defaults.Load()
	if !defaults.EmitCDEvents {
		return outs, nil
	}
	cdType := events.CDServiceUpgraded
	if typ == events.RolloutHalted {
		if d.Counts.RolledBack == 0 && d.Analysis != events.AnalysisFailed {
			return outs, nil
		}
		cdType = events.CDServiceRolledBack
	}
	cd, err := events.CDServiceEvent(e, d, cdType, defaults.Cluster)
	if err != nil {
		return nil, settle.Permanent(err)
	}
	return append(outs, cd), nil
}

// analysisOutcome is the verdict of r's canary analysis a rollout.completed
// or rollout.halted carries: Passed when it completed with every step
// passed, Failed or Inconclusive when the analysis halted it, empty
// otherwise.
func analysisOutcome(r *rollout.Rollout, typ string) string {
	switch {
	case r.Analysis == nil:
		return ""
	case typ == events.RolloutCompleted && r.Analysis.Done():
		return events.AnalysisPassed
	case typ == events.RolloutHalted && r.Reason == events.ReasonAnalysisFailed:
		return events.AnalysisFailed
	case typ == events.RolloutHalted && r.Reason == events.ReasonAnalysisInconclusive:
		return events.AnalysisInconclusive
	}
	return ""
}
