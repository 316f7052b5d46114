package inplace

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Patch is the RFC 6902 patch that moves pod to plan: it tests what the
// decision read of the pod (podGuardOps: the UID, the state annotation,
// the restarted containers' status, the gate, the owner; a concurrent
// change of any makes the API server reject it with 422, which is how
// "changed by someone else" is detected: re-read and call Patch again)
// and each planned container's name and image, replaces the images to
// change, and writes the inplace.dev/state annotation in the same request.
// A write of nothing it read (the kubelet's Ready False after the gate)
// does not refuse it.
//
// It returns ErrAlreadyApplied when the pod already carries this upgrade or
// already runs every planned image, an error wrapping ErrBusy while another
// upgrade of the pod is still active, and a permanent error when the pod no
// longer matches the plan (another UID, being deleted, a container gone or
// set to an image that is neither the plan's from nor to).
func Patch(pod *corev1.Pod, plan events.Plan, now time.Time) ([]byte, error) {
	return patch(pod, plan, now, false)
}

// PatchOver is Patch for a plan the rollout record confirms while the pod
// still shows another upgrade Patched (a success recorded on the bus, not
// on the pod, whose pod has since crashed or changed): the record moves a
// pod to a new upgrade only once the last one ended, so that state is
// taken as ended and replaced. A rollback under way is still ErrBusy.
func PatchOver(pod *corev1.Pod, plan events.Plan, now time.Time) ([]byte, error) {
	return patch(pod, plan, now, true)
}

func patch(pod *corev1.Pod, plan events.Plan, now time.Time, over bool) ([]byte, error) {
	if err := patchable(pod, plan, over); err != nil {
		return nil, err
	}
	var tests, writes []op
	var restarted []string
	st := newState(pod, plan, now)
	for _, cp := range plan.Containers {
		c, ok := findContainer(&pod.Spec, "/spec", cp.Name)
		if !ok {
			return nil, settle.Permanentf("patch pod %s: container %q is gone", plan.Pod, cp.Name)
		}
		tests = append(tests, testOp(c.Path+"/name", c.Name), testOp(c.Path+"/image", c.Image))
		switch c.Image {
		case cp.ToImage:
			continue
		case cp.FromImage:
		default:
			return nil, settle.Permanentf("patch pod %s: container %q runs %s, neither the planned %s nor %s (changed by someone else)",
				plan.Pod, cp.Name, c.Image, cp.FromImage, cp.ToImage)
		}
		writes = append(writes, replaceOp(c.Path+"/image", cp.ToImage))
		restarted = append(restarted, cp.Name)
		st.Containers = append(st.Containers, previous(pod, c, cp))
	}
	if len(st.Containers) == 0 {
		return nil, fmt.Errorf("patch pod %s: already runs the planned images: %w", plan.Pod, ErrAlreadyApplied)
	}
	ops := append(podGuardOps(pod, restarted), tests...)
	ops = append(ops, writes...)
	ops = append(ops, setKeyOps("", "/metadata/annotations", pod.Annotations, StateAnnotation, st.Encode())...)
	ops = append(ops, restartOps(st, now)...)
	return marshal(ops)
}

func checkPatchable(pod *corev1.Pod, plan events.Plan) error { return patchable(pod, plan, false) }

// patchable is checkPatchable; with over, another upgrade's Patched state
// does not make the pod busy (PatchOver).
func patchable(pod *corev1.Pod, plan events.Plan, over bool) error {
	switch {
	case string(pod.UID) != plan.Pod.UID:
		return settle.Permanentf("patch pod %s: uid is %s, not the planned %s (the pod was replaced)", plan.Pod, pod.UID, plan.Pod.UID)
	case pod.DeletionTimestamp != nil:
		return settle.Permanentf("patch pod %s: the pod is being deleted", plan.Pod)
	}
	st, err := ParseState(pod)
	switch {
	case err != nil:
		return err
	case st == nil:
		return nil
	case st.UpgradeID == plan.UpgradeID:
		return fmt.Errorf("patch pod %s: upgrade %s is already %s: %w", plan.Pod, st.UpgradeID, st.Phase, ErrAlreadyApplied)
	case InFlight(pod, st) && !(over && st.Phase == PhasePatched):
		return fmt.Errorf("patch pod %s: upgrade %s is still %s: %w", plan.Pod, st.UpgradeID, st.Phase, ErrBusy)
	}
	return nil
}

// previous records what c ran before the patch.
func previous(pod *corev1.Pod, c specContainer, cp events.ContainerPlan) ContainerState {
	s := ContainerState{Name: cp.Name, Sidecar: c.Sidecar, PreviousImage: c.Image,
		PreviousImageID: cp.FromImageID, TargetImage: cp.ToImage, TargetDigest: cp.ToDigest, PullPolicy: cp.PullPolicy}
	if cs := ContainerStatus(pod, cp.Name); cs != nil {
		s.PreviousImageID = cs.ImageID
		s.PreviousContainerID = cs.ContainerID
		s.PreviousRestartCount = cs.RestartCount
	}
	return s
}

// newState is the state a patch for plan writes over pod's, before its
// containers: with the upgrade it replaces, if any, and how that stood.
func newState(pod *corev1.Pod, plan events.Plan, now time.Time) State {
	return State{UpgradeID: plan.UpgradeID, Target: plan.Target, Phase: PhasePatched, PatchedAt: now.UTC(),
		Owner: plan.Owner, Wave: plan.Wave, GraceSeconds: plan.GraceSeconds, VerifySeconds: plan.VerifySeconds,
		MinReadySeconds: plan.MinReadySeconds,
		Prepull:         plan.Prepull, ReadinessGate: plan.ReadinessGate, PlannedAt: plan.PlannedAt, Restart: plan.Restart,
		Resize: plan.Resize, Attempt: plan.Attempt, StepEvents: plan.StepEvents,
		Replaced: replacedOn(pod, plan.UpgradeID, now)}
}
