package inplace

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// podGuardOps are the test operations that pin an image patch to what its
// decision read of the pod, and to nothing else, so that a write nobody's
// decision depends on (the kubelet's Ready False after the gate, a probe
// result, an Event-driven status update) does not make the API server
// refuse it, while any change the decision or the written state depends
// on still does:
//   - the UID (a pod recreated under the same name) and no deletion
//     begun (metadata.deletionTimestamp absent);
//   - the ownerReferences, from which the plan's owner was confirmed;
//   - the inplace.dev/state annotation as read, or its absence (another
//     upgrade, a rollback, verify's end of the last one);
//   - each restarted container's status as the state records it (name,
//     containerID, imageID, restartCount: verify judges the restart
//     against them, so a crash between the read and the write must not be
//     taken for it);
//   - the readiness gate's condition as the drain left it (type, status,
//     reason, message: a gate opened meanwhile puts the pod back in
//     service).
//
// The spec needs no test beyond the planned containers' names and images
// (patch adds those): a JSON patch changes only the paths it names, so
// whatever else changed meanwhile stays as it is, and a running pod's
// container lists cannot be reordered, so each index still names the
// container read. Where the state would record what cannot be
// pinned this way (a restarted container without a containerID, a gate
// declared without a condition), the resourceVersion is tested too.
//
// A test without a value asserts that the member is absent: RFC 6902
// requires the location to exist, but the API server's JSON-patch library
// (gopkg.in/evanphx/json-patch.v4, as v5) takes a null or missing value to
// match a missing member. Were that ever not so, the test would fail and
// the patch would be refused: never written unguarded.
func podGuardOps(pod *corev1.Pod, restarted []string) []op {
	ops := []op{testOp("/metadata/uid", string(pod.UID)), absentOp("/metadata/deletionTimestamp")}
	if len(pod.OwnerReferences) == 0 {
		ops = append(ops, absentOp("/metadata/ownerReferences"))
	} else {
		ops = append(ops, testOp("/metadata/ownerReferences", pod.OwnerReferences))
	}
	ops = append(ops, keyGuardOps("/metadata/annotations", pod.Annotations, StateAnnotation)...)
	pinned := true
	for _, name := range restarted {
		st, ok := containerStatusOps(pod, name)
		pinned = pinned && ok
		ops = append(ops, st...)
	}
	if HasGate(pod) {
		g, ok := gateOps(pod)
		pinned = pinned && ok
		ops = append(ops, g...)
	}
	if !pinned {
		ops = append(ops, testOp("/metadata/resourceVersion", pod.ResourceVersion))
	}
	return ops
}

// absentOp tests that nothing is at path (see podGuardOps).
func absentOp(path string) op { return op{Op: "test", Path: path} }

// keyGuardOps test key of the metadata map at base as read: its value, its
// absence, or the map's absence.
func keyGuardOps(base string, current map[string]string, key string) []op {
	if current == nil {
		return []op{absentOp(base)}
	}
	if v, ok := current[key]; ok {
		return []op{testOp(base+"/"+escape(key), v)}
	}
	return []op{absentOp(base + "/" + escape(key))}
}

// containerStatusOps test the named container's status fields that
// previous records; false when it has no status or no containerID yet.
func containerStatusOps(pod *corev1.Pod, name string) ([]op, bool) {
	lists := []struct {
		base string
		list []corev1.ContainerStatus
	}{{"/status/containerStatuses", pod.Status.ContainerStatuses}, {"/status/initContainerStatuses", pod.Status.InitContainerStatuses}}
	for _, l := range lists {
		for i, cs := range l.list {
			if cs.Name != name {
				continue
			}
			if cs.ContainerID == "" {
				return nil, false
			}
			p := fmt.Sprintf("%s/%d", l.base, i)
			return []op{testOp(p+"/name", cs.Name), testOp(p+"/containerID", cs.ContainerID),
				testOp(p+"/imageID", cs.ImageID), testOp(p+"/restartCount", cs.RestartCount)}, true
		}
	}
	return nil, false
}

// gateOps test the inplace.dev/ready condition as read; false when the pod
// has none.
func gateOps(pod *corev1.Pod) ([]op, bool) {
	for i, c := range pod.Status.Conditions {
		if c.Type != ReadinessGate {
			continue
		}
		p := fmt.Sprintf("/status/conditions/%d", i)
		ops := []op{testOp(p+"/type", string(c.Type)), testOp(p+"/status", string(c.Status))}
		for _, f := range []struct{ name, v string }{{"reason", c.Reason}, {"message", c.Message}} {
			if f.v == "" {
				ops = append(ops, absentOp(p+"/"+f.name))
			} else {
				ops = append(ops, testOp(p+"/"+f.name, f.v))
			}
		}
		return ops, true
	}
	return nil, false
}
