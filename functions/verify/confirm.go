package verify

import (
	"cmp"
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
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
)

// EventRefused: a state annotation the cluster and the rollout record do
// not confirm (a Warning Event on the pod; nothing is written to it but
// the gate, when nothing else would open it).
const EventRefused = "InPlaceRefused"

// EventTampered: a state annotation whose previous images are not the ones
// the rollout record holds (a Warning Event on the pod); verify goes by the
// record.
const EventTampered = "InPlaceStateTampered"

// Guard re-derives an upgrade's state from the cluster and the rollout
// record before any write (guard.Guard): the state as the record has it;
// and, once the pod is gone, whether the record has the plan's upgrade of
// it over already (its state there; "" while in flight).
type Guard interface {
	State(ctx context.Context, pod *corev1.Pod, st *inplace.State) (*inplace.State, error)
	Ended(ctx context.Context, plan events.Plan) (string, error)
}

// errNoGuard: a function built without a guard writes nothing.
var errNoGuard = &guard.Refusal{Reason: guard.ReasonNotPlanned, Message: "verify has no rollout records to check states against"}

// confirm asks the guard whether the pod's state is an upgrade compute-spec
// planned, whose owner still opts in, and returns the state as the record
// has it: the previous images a rollback restores are the record's (an
// annotation that names others was edited: a Warning Event says so). A
// state the record does not confirm is refused with a Warning Event and
// dead-lettered, the pod untouched; an upgrade whose owner no longer opts
// in is returned as withdrawn, to be reported failed, the pod left as it
// is. Either way, and when the record has that upgrade of the pod over,
// the gate patch-pod set False for it is set True: verify will not carry
// that upgrade on (the annotation it refuses stays as it is), and nothing
// else would open it.
func (s *step) confirm(ctx context.Context, pod *corev1.Pod, st *inplace.State) (rec *inplace.State, withdrawn *guard.Refusal, err error) {
	err = errNoGuard
	if s.f.d.Guard != nil {
		rec, err = s.f.d.Guard.State(ctx, pod, st)
	}
	var r *guard.Refusal
	switch {
	case err == nil:
		s.tampered(pod, st, rec)
		return rec, nil, nil
	case !errors.As(err, &r):
		return nil, nil, err
	}
	if r.Ended != "" {
		if err := s.openGate(ctx, pod, st.UpgradeID, "it is "+r.Ended+" in the rollout record"); err != nil {
			return nil, nil, err
		}
		return nil, nil, errEnded{r.Ended}
	}
	if moved, err := s.moved(ctx, pod); err != nil || moved {
		return nil, nil, cmp.Or(err, errAgain) // another delivery ended the upgrade meanwhile: look again
	}
	s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventRefused, "Refused to act on upgrade %s: %s: %s",
		st.UpgradeID, r.Reason, r.Message)
	s.f.d.Log.Warn("state refused", "pod", s.ref.String(), "upgrade", st.UpgradeID, "reason", r.Reason, "message", r.Message)
	if err := s.openGate(ctx, pod, st.UpgradeID, r.Reason+": "+r.Message); err != nil {
		return nil, nil, err
	}
	if !r.Withdrawn {
		return nil, nil, settle.Permanent(fmt.Errorf("verify %s: %w", s.ref, r))
	}
	return nil, r, nil
}

// tampered records a Warning Event for each container whose previous image
// in the annotation (st) is not the one the record holds (rec).
func (s *step) tampered(pod *corev1.Pod, st, rec *inplace.State) {
	for i, c := range st.Containers {
		want := rec.Containers[i].PreviousImage
		if c.PreviousImage == want {
			continue
		}
		s.f.d.Recorder.Eventf(pod, corev1.EventTypeWarning, EventTampered,
			"The %s annotation of upgrade %s names %s as container %s's previous image; the rollout record holds %s: verify goes by the record",
			inplace.StateAnnotation, st.UpgradeID, c.PreviousImage, c.Name, want)
		s.f.d.Log.Warn("state tampered", "pod", s.ref.String(), "upgrade", st.UpgradeID, "container", c.Name,
			"annotation", c.PreviousImage, "record", want)
	}
}

// openGate sets the gate True when patch-pod set it False for upgradeID
// (inplace.GateHeldFor), pinned to the pod's UID; why says why that
// upgrade will not open it.
func (s *step) openGate(ctx context.Context, pod *corev1.Pod, upgradeID, why string) error {
	if !inplace.GateHeldFor(pod, upgradeID) {
		return nil
	}
	patch := inplace.GatePatch(pod.UID, corev1.ConditionTrue, inplace.GateReasonDone,
		fmt.Sprintf("in-place upgrade %s is not carried on: %s", upgradeID, why), s.f.d.Clock.Now())
	out, err := s.f.d.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if err != nil {
		return fmt.Errorf("verify %s: open the gate: %w", s.ref, err)
	}
	s.f.d.Reader.Wrote(out)
	return nil
}

// moved reports whether the pod's state changed since pod was read: a
// refusal of a state that is no longer there (another delivery finished
// the upgrade, and compute-spec recorded it) is no refusal.
func (s *step) moved(ctx context.Context, pod *corev1.Pod) (bool, error) {
	now, err := s.f.d.Reader.Pod(ctx, pod.Namespace, pod.Name)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("verify %s: get: %w", s.ref, err)
	}
	return now.UID != pod.UID || now.Annotations[inplace.StateAnnotation] != pod.Annotations[inplace.StateAnnotation], nil
}

// errEnded: the rollout record has this upgrade of this pod over (a
// success verify recorded on the bus and in the record, not on the pod;
// or an end the watchdog recorded): nothing is left to write.
type errEnded struct{ state string }

func (e errEnded) Error() string { return "the rollout record has the upgrade " + e.state }

// recorded answers for an upgrade the record has over: a timer reports
// that end again (the same event, by id, as when it ended); other inputs
// (a pod.updated of a pod that crashed after its success) do nothing.
func (s *step) recorded(plan events.Plan, st *inplace.State, pod *corev1.Pod, state string) ([]cloudevents.Event, error) {
	if !s.timer {
		return nil, nil
	}
	reason := cmp.Or(st.Reason, state)
	switch state {
	case string(rollout.Succeeded):
		return s.outcome(plan, st, pod, events.UpgradeSucceeded, events.OutcomeSucceeded, cmp.Or(st.Reason, inplace.ReasonUpdated), st.Message)
	case string(rollout.RolledBack):
		return s.outcome(plan, st, pod, events.UpgradeRolledBack, events.OutcomeRolledBack, reason, st.Message)
	}
	return s.outcome(plan, st, pod, events.UpgradeFailed, events.OutcomeFailed, reason, "the rollout record has the upgrade "+state)
}
