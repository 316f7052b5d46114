package inplace

import (
	"strconv"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
)

// PlanFromState rebuilds the plan of the upgrade recorded in a pod's state,
// for a function that holds only the pod (verify on pod.updated or
// container.restarted). The upgrade id, pod (with UID and node) and owner
// are exactly the plan's, so outcomes key the same way whichever event led
// to them; containers the patch did not change (already on the target) are
// not in the state and so not in the rebuilt plan.
func PlanFromState(pod *corev1.Pod, st *State) events.Plan {
	p := events.Plan{
		UpgradeID: st.UpgradeID,
		Pod: events.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID),
			Node: pod.Spec.NodeName},
		Owner:           st.Owner,
		Target:          st.Target,
		Wave:            st.Wave,
		GraceSeconds:    st.GraceSeconds,
		Prepull:         st.Prepull,
		ReadinessGate:   st.ReadinessGate,
		VerifySeconds:   st.VerifySeconds,
		MinReadySeconds: st.MinReadySeconds,
		PlannedAt:       st.PlannedAt,
		Restart:         st.Restart,
		Resize:          st.Resize,
		Attempt:         st.Attempt,
		StepEvents:      st.StepEvents,
	}
	for _, c := range st.Containers {
		p.Containers = append(p.Containers, events.ContainerPlan{
			Name: c.Name, Sidecar: c.Sidecar,
			FromImage: c.PreviousImage, FromImageID: c.PreviousImageID,
			ToImage: c.TargetImage, ToDigest: c.TargetDigest, PullPolicy: c.PullPolicy,
			Resources: c.Resources,
		})
	}
	return p
}

// StepID is the id of an event meaning "this try at the pod's upgrade
// reached a state" (upgrade.planned, image.prepulled, pod.patched,
// upgrade.succeeded, ...): it depends only on the upgrade, the pod's UID,
// the plan's attempt and the event type, never on which input led there,
// so every path to the same state emits one event and the stream's dedup
// window drops the copies. A new attempt (a watchdog's reminder, a resumed
// rollout's re-plan) gets ids of its own all the way down the chain: the
// step an earlier attempt's event failed at (dead-lettered) sees the new
// one. The first attempt (0) keeps the key-less id.
func StepID(plan events.Plan, typ string) string {
	key := ""
	if plan.Attempt > 0 {
		key = "attempt-" + strconv.Itoa(plan.Attempt)
	}
	return events.DeriveID(plan.UpgradeID+"/"+plan.Pod.UID, typ, key)
}

// StepEvent builds the step event typ of plan from the input in: id
// StepID(plan, typ), subject the pod, the plan's upgradeid (an input from
// the pod watcher carries none), trace and replay marker carried from in.
func StepEvent(in cloudevents.Event, plan events.Plan, typ, source string, data any) (cloudevents.Event, error) {
	out, err := events.Follow(in, StepID(plan, typ), typ, source, plan.Pod.String(), data)
	if err != nil {
		return out, err
	}
	out.SetExtension(events.ExtUpgradeID, plan.UpgradeID)
	return out, nil
}
