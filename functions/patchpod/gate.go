package patchpod

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// drain sets the gate False, waits the grace period from the moment it did
// (gateFalseSince), then waits until the pod is out of service: Ready no
// longer True and no ready endpoint of any Service (the kubelet and the
// EndpointSlice controller take their time to honour the gate). A pod
// whose restarted containers all have a preStop hook is not waited for
// (stopsAfterPreStop): with no grace it is patched right after the gate's
// write. It returns nil when the patch may go, the pod the gate's write
// returned when the gate was just set and the patch may follow at once,
// "not yet" with the time the
// decision can next change by itself (the grace's end, the DrainTimeout
// deadline, else the DrainRecheck: with Changes the watch wakes the
// delivery sooner), or a refusal when the pod stayed in service past
// DrainTimeout.
func (s *step) drain(ctx context.Context, pod *corev1.Pod, now time.Time) (*corev1.Pod, error) {
	grace := time.Duration(s.plan.GraceSeconds) * time.Second
	covered := stopsAfterPreStop(pod, s.plan)
	since, ok := gateFalseSince(pod)
	if !ok {
		msg := inplace.GateStartMessage(s.plan.UpgradeID, s.plan.Target)
		written, err := s.setGate(ctx, pod, corev1.ConditionFalse, inplace.GateReasonStart, gateMessage(msg, now), now)
		if err != nil {
			return nil, err
		}
		if covered && grace == 0 {
			if !s.plan.StepEvents {
				s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventUpgrade,
					"Readiness gate %s set False; patching now: the kubelet stops the restarted containers only after their preStop hooks, while the pod leaves service",
					inplace.ReadinessGate)
			}
			return written, nil
		}
		if !s.plan.StepEvents {
			s.f.d.Recorder.Eventf(pod, corev1.EventTypeNormal, EventUpgrade,
				"Readiness gate %s set False; patching in %s, once the pod is out of service", inplace.ReadinessGate, grace)
		}
		wait := max(grace+time.Second, s.f.d.DrainRecheck) // polled: give the kubelet its second
		if s.f.d.Changes != nil {
			wait = max(grace, time.Millisecond) // watched: look again at once, or when the grace ends
		}
		return nil, settle.NotYet(wait, "draining pod %s for %s", s.plan.Pod, grace)
	}
	if wait := drainedAt(since, grace).Sub(now); wait > 0 {
		return nil, settle.NotYet(wait, "draining pod %s: %s left", s.plan.Pod, wait.Round(time.Millisecond))
	}
	if covered {
		return nil, nil
	}
	slices, err := s.f.d.Slices.PodEndpointSlices(ctx, pod)
	if err != nil {
		return nil, fmt.Errorf("patch pod %s: list EndpointSlices: %w", s.plan.Pod, err)
	}
	done, msg := inplace.Drained(pod, slices)
	switch {
	case done:
		return nil, nil
	case now.Sub(since) > s.f.d.DrainTimeout:
		return nil, errNotDrained{fmt.Sprintf("readiness gate False for %s and %s", now.Sub(since).Round(time.Second), msg)}
	}
	next := min(s.f.d.DrainRecheck, since.Add(s.f.d.DrainTimeout).Sub(now)+time.Millisecond)
	return nil, onWatch(settle.NotYet(next, "pod %s: gate False, waiting to leave service: %s", s.plan.Pod, msg))
}

// stopsAfterPreStop reports whether every container the plan restarts
// declares a preStop hook. On an image change the kubelet (v1.35,
// kuberuntime killContainer) runs the container's preStop hook before it
// sends SIGTERM, and it writes the pod's status, Ready False for the gate,
// before it stops anything (Kubelet.SyncPod sets the status, then the
// runtime's SyncPod kills): the container serves through its hook while
// the endpoint leaves the Services, as it does when the pod is deleted,
// where the same hook covers the same removal. So the patch need not wait
// for the EndpointSlices, and written right after the gate it often
// reaches the kubelet in the same sync, sparing the PLEG relist the kubelet
// waits for between two syncs of a pod. A grace period alone proves
// nothing: an app may stop serving at SIGTERM.
func stopsAfterPreStop(pod *corev1.Pod, plan events.Plan) bool {
	if len(plan.Containers) == 0 {
		return false
	}
	for _, pc := range plan.Containers {
		c := specContainer(pod, pc.Name)
		if c == nil || c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
			return false
		}
	}
	return true
}

// specContainer is the named container or init container of pod's spec.
func specContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// errNotDrained: the pod stayed in service although its gate went False
// (a kubelet that does not honour it, a node gone silent). It is never
// patched then.
type errNotDrained struct{ msg string }

func (e errNotDrained) Error() string { return e.msg }

// drainedAt is when a gate False since t has been False for grace (no
// wait at all with no grace).
func drainedAt(t time.Time, grace time.Duration) time.Time {
	if grace == 0 {
		return time.Time{}
	}
	return t.Add(grace)
}

// sinceMark ends the gate's message with the moment patch-pod set it
// False, to the nanosecond: the condition's lastTransitionTime has second
// precision (truncated).
const sinceMark = "; False since "

// gateMessage is msg with the moment the gate goes False.
func gateMessage(msg string, now time.Time) string {
	return msg + sinceMark + now.UTC().Format(time.RFC3339Nano)
}

// gateFalseSince is when the gate condition went False, if it is False:
// the moment its message gives when it lies within the second its
// lastTransitionTime names (the message is only believed within that
// bound), else the end of that second, so a grace is never cut short.
func gateFalseSince(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type != inplace.ReadinessGate || c.Status != corev1.ConditionFalse {
			continue
		}
		from := c.LastTransitionTime.Time
		to := from.Add(time.Second)
		if i := strings.LastIndex(c.Message, sinceMark); i >= 0 {
			t, err := time.Parse(time.RFC3339Nano, c.Message[i+len(sinceMark):])
			if err == nil && !t.Before(from) && t.Before(to) {
				return t, true
			}
		}
		return to, true
	}
	return time.Time{}, false
}

// setGate writes the gate condition through the status subresource, pinned
// to the pod's UID.
func (s *step) setGate(ctx context.Context, pod *corev1.Pod, status corev1.ConditionStatus, reason, msg string, now time.Time) (*corev1.Pod, error) {
	patch := inplace.GatePatch(pod.UID, status, reason, msg, now)
	out, err := s.f.d.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if err != nil {
		return nil, fmt.Errorf("patch pod %s: set gate %s: %w", s.plan.Pod, status, err)
	}
	s.f.d.Reader.Wrote(out)
	return out, nil
}

// restoreGate sets the gate True again when this function set it False
// for this plan's upgrade and the upgrade will not go ahead, so the pod is
// not left NotReady.
func (s *step) restoreGate(ctx context.Context, pod *corev1.Pod) error {
	if !inplace.GateHeldFor(pod, s.plan.UpgradeID) {
		return nil
	}
	_, err := s.setGate(ctx, pod, corev1.ConditionTrue, inplace.GateReasonDone,
		fmt.Sprintf("in-place upgrade %s did not go ahead", s.plan.UpgradeID), s.f.d.Clock.Now())
	return err
}
