package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Watchdog bounds every wait of a rollout. Each in-flight pod has a
// deadline derived from its plan and its durable state: planned and not yet
// patched, grace + pre-pull timeout; patched (or rolling back), the
// verify time and the workload's minReadySeconds. Slack is added to both.
// Past the deadline the step that should move the pod is reminded (the
// event that drives it is published again, with an id of its own) every
// NudgeEvery; after Nudges reminders the pod is given up: Failed with
// reason Deadline, which halts the rollout. A Running rollout with nothing
// in flight and no progress for StallDeadline is halted too.
//
// The values come from config-inplace (watchdog-slack,
// watchdog-remind-every, watchdog-reminders, stall-deadline,
// prepull-timeout, verify-seconds); a non-zero field of Deps.Watchdog
// overrides its key.
type Watchdog struct {
	// Period is how often the process's loop runs Sweep.
	Period         time.Duration
	Slack          time.Duration
	NudgeEvery     time.Duration
	Nudges         int
	StallDeadline  time.Duration
	PrepullTimeout time.Duration
	VerifySeconds  int
}

// DefaultWatchdogPeriod is how often `inplace run` sweeps.
const DefaultWatchdogPeriod = 30 * time.Second

// CheckKind is what the watchdog does about one in-flight pod.
type CheckKind int

const (
	// OnTime: the pod is within its deadline.
	OnTime CheckKind = iota
	// Ended: the pod's state shows how its upgrade ended; the outcome was
	// not recorded (lost, or dead-lettered): record it.
	Ended
	// Gone: the pod was deleted or replaced; record it as such.
	Gone
	// LateDispatch: not patched past its deadline: publish upgrade.planned again.
	LateDispatch
	// LateVerify: patched past its deadline: publish pod.patched again.
	LateVerify
	// Expired: reminded enough; the pod fails with reason Deadline.
	Expired
)

// PodCheck is the verdict on one in-flight pod.
type PodCheck struct {
	Kind CheckKind
	// Outcome is the outcome to record, of event Type (Ended, Gone, Expired).
	Outcome events.OutcomeData
	Type    string
	// Nudge numbers the reminder by the time past the deadline of the
	// wait that began at Since; each is recorded once (rollout.Remind), as
	// a new try.
	Nudge int
	Since time.Time
	// State is the pod's, for LateVerify.
	State *inplace.State
	// Pod is the record's, Live the cluster's (late kinds only).
	Pod  *rollout.Pod
	Live *corev1.Pod
}

// CheckPod decides from the pod as the cluster shows it (nil when gone):
// what it shows became of the plan (inplace.AccountOf, as an outcome is
// confirmed before it is recorded), then the deadlines. It does no I/O.
func CheckPod(r *rollout.Rollout, p *rollout.Pod, pod *corev1.Pod, now time.Time, w Watchdog) PodCheck {
	plan := PodPlan(r, p)
	a := inplace.AccountOf(pod, plan)
	switch a.Stage {
	case inplace.StageGone:
		return PodCheck{Kind: Gone, Type: a.Type, Outcome: a.Outcome(plan)}
	case inplace.StageEnded:
		return PodCheck{Kind: Ended, Type: a.Type, Outcome: a.Outcome(plan)}
	}
	patched := a.Stage == inplace.StageMoving || a.Stage == inplace.StagePassed
	since, deadline, what := dispatchDeadline(r, p, w)
	var st *inplace.State
	if patched {
		st, _ = inplace.ParseState(pod)
		since, deadline, what = verifyDeadline(r, st, w)
	}
	if now.Before(deadline) {
		return PodCheck{Kind: OnTime}
	}
	late := now.Sub(deadline)
	if n := int(late / w.NudgeEvery); n < w.Nudges && (patched || p.UpgradeID == r.UpgradeID) {
		if patched {
			return PodCheck{Kind: LateVerify, Nudge: n, Since: since, State: st}
		}
		return PodCheck{Kind: LateDispatch, Nudge: n, Since: since}
	}
	return PodCheck{Kind: Expired, Type: events.UpgradeFailed, Outcome: events.OutcomeData{Plan: plan, Outcome: events.OutcomeFailed,
		Reason: ReasonDeadline, Message: fmt.Sprintf("%s since %s; still not done %s after its deadline",
			what, since.UTC().Format(time.RFC3339), late.Round(time.Second))}}
}

// ReasonDeadline: a pod's upgrade did not end within its deadline, however
// often it was reminded.
const ReasonDeadline = "Deadline"

// dispatchDeadline: from planned to patched, grace and pre-pull included.
func dispatchDeadline(r *rollout.Rollout, p *rollout.Pod, w Watchdog) (time.Time, time.Time, string) {
	since := p.PlannedAt
	if since.IsZero() {
		since = r.StartedAt
	}
	d := time.Duration(r.Options.GraceSeconds)*time.Second + w.PrepullTimeout + w.Slack
	return since, since.Add(d), "planned, not patched"
}

// verifyDeadline: from the patch (or the rollback) to a verdict.
func verifyDeadline(r *rollout.Rollout, st *inplace.State, w Watchdog) (time.Time, time.Time, string) {
	secs := st.VerifySeconds
	if secs <= 0 {
		secs = r.Options.VerifySeconds
	}
	if secs <= 0 {
		secs = w.VerifySeconds
	}
	d := time.Duration(secs+st.MinReadySeconds)*time.Second + w.Slack
	if st.Phase == inplace.PhaseRollingBack {
		return st.RollbackAt, st.RollbackAt.Add(d), "rolling back"
	}
	return st.PatchedAt, st.PatchedAt.Add(d), "patched, not verified"
}

// PodPlan is the plan of an in-flight pod as the rollout recorded it.
func PodPlan(r *rollout.Rollout, p *rollout.Pod) events.Plan {
	plan := events.Plan{
		UpgradeID: p.UpgradeID, Pod: events.PodRef{Namespace: r.Workload.Namespace, Name: p.Name, UID: p.UID, Node: p.Node},
		Owner: r.Workload, Containers: p.Containers, Target: r.Target(), Wave: p.Wave,
		GraceSeconds: r.Options.GraceSeconds, Prepull: r.Options.Prepull, ReadinessGate: p.ReadinessGate,
		VerifySeconds: r.Options.VerifySeconds, MinReadySeconds: r.Options.MinReadySeconds, PlannedAt: p.PlannedAt,
		Signer: r.Signer, Attempt: p.Attempt(),
	}
	if x := r.Request(); x != nil {
		x.Mark(&plan)
	}
	return plan
}
