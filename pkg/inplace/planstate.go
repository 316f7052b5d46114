package inplace

import (
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

// StepID is the id of an event meaning "this pod's upgrade reached a
// state" (pod.patched, upgrade.succeeded, ...): it depends only on the
// upgrade, the pod's UID and the event type, never on which input led
// there, so every path to the same state emits one event and the stream's
// dedup window drops the copies.
func StepID(plan events.Plan, typ string) string {
	return events.DeriveID(plan.UpgradeID+"/"+plan.Pod.UID, typ, "")
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
