package inplace

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Drained reports whether a pod whose readiness gate was set False is out
// of service, so that its containers may be restarted: its Ready condition
// is no longer True (the kubelet honoured the gate, which takes the real
// kubelet up to about a second) and no EndpointSlice lists it as a ready
// endpoint (the EndpointSlice controller took it out of every Service).
// Setting the gate alone is not enough: a patch sent right after it lands
// while traffic still reaches the container being killed (OpenKruise
// #2276). msg says what is still awaited.
func Drained(pod *corev1.Pod, slices []discoveryv1.EndpointSlice) (ok bool, msg string) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return false, "the pod is still Ready"
		}
	}
	for i := range slices {
		s := &slices[i]
		for _, e := range s.Endpoints {
			if e.TargetRef == nil || e.TargetRef.UID != pod.UID {
				continue
			}
			// A nil ready condition means ready (the API's own reading).
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				return false, fmt.Sprintf("still a ready endpoint of Service %s (EndpointSlice %s)",
					s.Labels[discoveryv1.LabelServiceName], s.Name)
			}
		}
	}
	return true, ""
}
