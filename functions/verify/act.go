package verify

import (
	"context"
	"errors"
	"fmt"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// act carries out a decision. One that writes the pod needs the guard's
// confirmation of the state first; once confirmed, the pod is read and the
// decision taken again on the state as the record has it, so the write
// follows a fresh read (the kubelet may have moved on while the guard read
// the cluster).
func (s *step) act(ctx context.Context, plan events.Plan, st *inplace.State, pod *corev1.Pod,
	r inplace.Result, d decision) ([]cloudevents.Event, error) {
	if d.act != wait && !s.leased {
		return nil, errLease
	}
	if d.act != wait && d.act != report && s.confirmed != pod.Annotations[inplace.StateAnnotation] {
		rec, w, err := s.confirm(ctx, pod, st)
		var ended errEnded
		switch {
		case errors.As(err, &ended):
			return s.recorded(plan, st, pod, ended.state)
		case err != nil:
			return nil, err
		case w != nil:
			return s.outcome(plan, st, pod, events.UpgradeFailed, events.OutcomeFailed, w.Reason, w.Message)
		}
		s.confirmed, s.asRecorded = pod.Annotations[inplace.StateAnnotation], rec
		return nil, errAgain
	}
	switch d.act {
	case succeed:
		return s.finish(ctx, plan, st, pod, inplace.PhaseSucceeded, d)
	case rolledBack:
		return s.finish(ctx, plan, st, pod, inplace.PhaseRolledBack, d)
	case fail:
		return s.finish(ctx, plan, st, pod, inplace.PhaseFailed, d)
	case report:
		return s.outcome(plan, st, pod, events.UpgradeFailed, events.OutcomeFailed, d.reason, d.message)
	case openGate:
		return s.open(ctx, pod, r, d)
	case rollback:
		if st.Resize != nil {
			return s.resizeBack(ctx, plan, st, pod, r, d)
		}
		return s.rollback(ctx, plan, st, pod, r, d)
	}
	return s.later(r)
}

// rollback patches the previous images back and waits for them.
func (s *step) rollback(ctx context.Context, plan events.Plan, st *inplace.State, pod *corev1.Pod,
	r inplace.Result, d decision) ([]cloudevents.Event, error) {
	patch, err := inplace.RollbackPatchMessage(pod, st, d.reason, d.message, s.f.d.Clock.Now())
	switch {
	case errors.Is(err, inplace.ErrAlreadyApplied):
		return nil, errAgain
	case err != nil:
		d = decision{fail, inplace.ReasonChangedByOthers, fmt.Sprintf("%s: %s; cannot roll back: %v", d.reason, d.message, err)}
		return s.finish(ctx, plan, st, pod, inplace.PhaseFailed, d)
	}
	if err := s.write(ctx, pod, patch); err != nil {
		return nil, err
	}
	for _, c := range st.Containers {
		s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventRollback, "Rolling back container %s to image %q: %s: %s",
			c.Name, c.PreviousImage, d.reason, d.message)
	}
	s.f.d.Log.Warn("rolling back", "pod", plan.Pod.String(), "upgrade", plan.UpgradeID, "reason", d.reason, "message", d.message)
	return s.later(r)
}

// finish closes the state with phase (opening the gate in the same write)
// and reports.
func (s *step) finish(ctx context.Context, plan events.Plan, st *inplace.State, pod *corev1.Pod,
	phase inplace.Phase, d decision) ([]cloudevents.Event, error) {
	if err := s.close(ctx, pod, *st, phase, d.reason); err != nil {
		return nil, err
	}
	next := *st
	next.Phase, next.Reason, next.Message = phase, d.reason, d.message
	if st.Resize != nil {
		return s.resizeFinished(pod, plan, st, &next, phase, d)
	}
	if st.Restart != nil {
		s.restartEvent(pod, plan, st, phase, d)
		if phase == inplace.PhaseSucceeded {
			return s.outcome(plan, &next, pod, events.UpgradeSucceeded, events.OutcomeSucceeded, d.reason, d.message)
		}
		return s.outcome(plan, &next, pod, events.UpgradeFailed, events.OutcomeFailed, d.reason, d.message)
	}
	switch phase {
	case inplace.PhaseSucceeded:
		if !plan.StepEvents { // else one Event on the workload when the rollout completes (compute-spec)
			s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventUpgrade, "Upgraded in place to image %q", plan.Target)
		}
		return s.outcome(plan, &next, pod, events.UpgradeSucceeded, events.OutcomeSucceeded, d.reason, d.message)
	case inplace.PhaseRolledBack:
		s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventRollback, "Rolled back to the previous images after %s", d.reason)
		return s.outcome(plan, &next, pod, events.UpgradeRolledBack, events.OutcomeRolledBack, d.reason, d.message)
	}
	s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventUpgrade, "In-place upgrade failed: %s: %s", d.reason, d.message)
	return s.outcome(plan, &next, pod, events.UpgradeFailed, events.OutcomeFailed, d.reason, d.message)
}

// open sets the gate True while the upgrade waits for its containers to
// be ready (gateEarly), then waits on.
func (s *step) open(ctx context.Context, pod *corev1.Pod, r inplace.Result, d decision) ([]cloudevents.Event, error) {
	patch, err := inplace.OpenGatePatch(pod, d.message, s.f.d.Clock.Now())
	switch {
	case errors.Is(err, inplace.ErrAlreadyApplied):
		return nil, errAgain
	case err != nil:
		return nil, err
	}
	if err := s.write(ctx, pod, patch, "status"); err != nil {
		return nil, err
	}
	return s.later(r)
}

// close is the upgrade's last write: the state's final phase, with the
// gate set True in the same patch (through the status subresource) when
// the pod declares it and it is not True yet. A success with no gate to
// open writes nothing: the upgrade's one write was patch-pod's; its end
// goes on the bus (upgrade.succeeded) and into the rollout record.
func (s *step) close(ctx context.Context, pod *corev1.Pod, st inplace.State, phase inplace.Phase, reason string) error {
	build, sub := inplace.FinishPatch, []string(nil)
	switch {
	case gateToOpen(pod):
		build, sub = inplace.FinishGatePatch, []string{"status"}
	case phase == inplace.PhaseSucceeded && st.Resize == nil:
		return nil // recorded on the bus and in the rollout record: the Patched state passes inplace.InFlight
	}
	patch, err := build(pod, st, phase, reason, s.f.d.Clock.Now())
	switch {
	case errors.Is(err, inplace.ErrAlreadyApplied):
		return nil
	case err != nil:
		return err
	}
	return s.write(ctx, pod, patch, sub...)
}

// write sends a JSON patch of this package's making (to the subresource,
// if any); a failed test means the pod changed: read it again.
func (s *step) write(ctx context.Context, pod *corev1.Pod, patch []byte, subresource ...string) error {
	out, err := s.f.d.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, subresource...)
	switch {
	case inplace.PreconditionFailed(err), apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return errAgain
	case err != nil:
		return fmt.Errorf("verify %s: patch: %w", s.ref, err)
	}
	s.f.d.Reader.Wrote(out)
	return nil
}

// outcome reports how the upgrade ended, unless this process has put that
// outcome on the stream already (or, for a pod.updated, is putting it
// there: reported); st and pod may be nil.
func (s *step) outcome(plan events.Plan, st *inplace.State, pod *corev1.Pod, typ, outcome, reason, msg string) ([]cloudevents.Event, error) {
	data := events.OutcomeData{Plan: plan, Outcome: outcome, Reason: reason, Message: msg,
		FinishedAt: s.f.d.Clock.Now().UTC()}
	if st != nil {
		data.PatchedAt = st.PatchedAt
		if !st.FinishedAt.IsZero() && !st.Phase.Active() {
			data.FinishedAt = st.FinishedAt
		}
	}
	if pod != nil && st != nil && st.UpgradeID == plan.UpgradeID {
		data.Containers = inplace.Progress(pod, st, plan).Containers
	}
	out, err := inplace.StepEvent(s.in, plan, typ, events.Source(Name), data)
	switch {
	case err != nil:
		return nil, settle.Permanent(err)
	case s.f.reported.skip(out.ID(), s):
		return nil, nil // on the stream already, or on its way: this delivery is done
	case !s.leased:
		return nil, errLease
	}
	s.f.reported.returning(out.ID(), s)
	return []cloudevents.Event{out}, nil
}
