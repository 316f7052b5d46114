package watcher

import (
	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// Source is the CloudEvents source of the watcher's events.
var Source = events.Source("pod-watcher")

// Changes are the events one observed change of a pod (old is nil for a
// pod seen for the first time) stands for: pod.updated for a pod with an
// upgrade in flight (inplace.InFlight) or that just landed, when the
// change bears on verify's decision (unmoved), and container.restarted
// for each of its containers that restarted since old. Nothing for other
// pods, nor for patch-pod's own write of a plan (announced): its
// pod.patched tells verify of that write.
func Changes(old, cur *corev1.Pod) ([]cloudevents.Event, error) {
	st, updated, restarts, err := changed(old, cur, parse)
	if err != nil || !updated {
		return restarts, err
	}
	e, err := podUpdated(cur, st, "")
	if err != nil {
		return nil, err
	}
	return append([]cloudevents.Event{e}, restarts...), nil
}

// changed is Changes with its pod.updated left to the caller to make:
// whether there is one (of cur, with its state st), and the
// container.restarted events. state parses cur's state annotation.
func changed(old, cur *corev1.Pod, state func(*corev1.Pod) *inplace.State) (st *inplace.State, updated bool, restarts []cloudevents.Event, err error) {
	st = state(cur)
	inFlight := inplace.InFlight(cur, st)
	if !inFlight && !landed(old, cur, st) {
		return nil, false, nil, nil
	}
	if old == nil {
		return st, true, nil, nil
	}
	if announced(old, cur, st) {
		return nil, false, nil, nil
	}
	updated = !inFlight || !unmoved(old, cur, st)
	for _, list := range [][]corev1.ContainerStatus{cur.Status.InitContainerStatuses, cur.Status.ContainerStatuses} {
		for i := range list {
			e, ok, err := restarted(old, cur, st, &list[i])
			if err != nil {
				return nil, false, nil, err
			}
			if ok {
				restarts = append(restarts, e)
			}
		}
	}
	return st, updated, restarts, nil
}

// unmoved: the change from old to cur, within one upgrade still in flight
// on cur, leaves verify's decision as it was (the same inplace.Bearing):
// a kubelet status write on the way, such as the one that reports the old
// container stopped or the new one created, while the completion check
// still waits.
// verify hears of the pod at the next change that bears on its decision,
// or from its own timer for a deadline; a pod.updated of this one would
// wake it only to wait again. The informer's resync (the same
// resourceVersion) is not a change: it publishes again, as the periodic
// look a level-triggered controller takes.
func unmoved(old, cur *corev1.Pod, st *inplace.State) bool {
	if old.UID != cur.UID || old.ResourceVersion == cur.ResourceVersion || stateBefore(old, cur, st) != st {
		return false
	}
	was, ok := inplace.BearingOf(old, st)
	if !ok {
		return false
	}
	is, _ := inplace.BearingOf(cur, st)
	return was == is
}

// landed: the change that took the pod's upgrade out of flight without a
// write of ours (every container on the target and ready, no gate to
// open): verify hears of it from this one pod.updated and records the
// success on the bus; the pod, settled, is heard of no more.
func landed(old, cur *corev1.Pod, st *inplace.State) bool {
	if old == nil || old.UID != cur.UID || st == nil || !st.Phase.Active() {
		return false
	}
	prev := stateBefore(old, cur, st)
	return prev != nil && prev.UpgradeID == st.UpgradeID && inplace.InFlight(old, prev)
}

// stateBefore is old's state, cur's being st: st itself when the change
// left the annotation as it was.
func stateBefore(old, cur *corev1.Pod, st *inplace.State) *inplace.State {
	if old.Annotations[inplace.StateAnnotation] == cur.Annotations[inplace.StateAnnotation] {
		return st
	}
	prev, _ := inplace.ParseState(old)
	return prev
}

// announced: the change from old to cur is patch-pod's write of a plan
// and nothing else the kubelet reports: the state annotation now records a
// Patched phase (of an upgrade, restart or resize) that old's did not, and
// the status is old's. patch-pod reports every such write with pod.patched
// (a redelivery reports it again, writing nothing), which verify takes with
// the write's resourceVersion; a pod.updated of it would only wake verify
// to find the kubelet has not acted yet.
func announced(old, cur *corev1.Pod, st *inplace.State) bool {
	if st == nil || st.Phase != inplace.PhasePatched || old.UID != cur.UID {
		return false
	}
	if prev := stateBefore(old, cur, st); prev != nil && prev.UpgradeID == st.UpgradeID && prev.Phase == st.Phase {
		return false
	}
	return apiequality.Semantic.DeepEqual(old.Status, cur.Status)
}

// parse is a pod's state, nil when it has none or it cannot be read.
func parse(pod *corev1.Pod) *inplace.State {
	st, _ := inplace.ParseState(pod)
	return st
}

// Deleted is the pod.updated for a pod with an upgrade in flight that was
// deleted: verify then reports it gone. Its id differs from the last
// update's, which may be the same pod state.
func Deleted(last *corev1.Pod) (cloudevents.Event, bool, error) {
	st, _ := inplace.ParseState(last)
	if !inplace.InFlight(last, st) {
		return cloudevents.Event{}, false, nil
	}
	e, err := podUpdated(last, st, "deleted")
	return e, err == nil, err
}

func podUpdated(pod *corev1.Pod, st *inplace.State, key string) (cloudevents.Event, error) {
	p := pod.DeepCopy()
	p.ManagedFields = nil
	id := events.DeriveID(events.PodStateKey(pod), events.PodUpdated, key)
	e, err := events.New(id, events.PodUpdated, Source, pod.Namespace+"/"+pod.Name, events.PodUpdatedData{Pod: *p})
	if err != nil {
		return e, err
	}
	e.SetExtension(events.ExtUpgradeID, st.UpgradeID)
	return e, nil
}

// restarted is the container.restarted of cs when it moved since old.
func restarted(old, cur *corev1.Pod, st *inplace.State, cs *corev1.ContainerStatus) (cloudevents.Event, bool, error) {
	prev := containerStatus(old, cs.Name)
	if prev == nil || old.UID != cur.UID {
		return cloudevents.Event{}, false, nil
	}
	moved := cs.RestartCount > prev.RestartCount || (cs.ContainerID != "" && cs.ContainerID != prev.ContainerID)
	if !moved {
		return cloudevents.Event{}, false, nil
	}
	data := events.ContainerRestartedData{
		Pod:            events.PodRef{Namespace: cur.Namespace, Name: cur.Name, UID: string(cur.UID), Node: cur.Spec.NodeName},
		Container:      cs.Name,
		OldContainerID: prev.ContainerID, NewContainerID: cs.ContainerID,
		RestartCount: cs.RestartCount, Image: cs.Image, ImageID: cs.ImageID,
	}
	id := events.DeriveID(events.PodStateKey(cur), events.ContainerRestarted, cs.Name)
	e, err := events.New(id, events.ContainerRestarted, Source, cur.Namespace+"/"+cur.Name, data)
	if err != nil {
		return e, false, err
	}
	e.SetExtension(events.ExtUpgradeID, st.UpgradeID)
	return e, true, nil
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// NeedsGate reports a pod that declares the gate, has no condition for it
// and no upgrade in flight, and is bound to a node: the watcher sets the
// condition True. An unbound pod waits for its binding, which changes the
// pod (node, PodScheduled) a moment after it appears and would have the
// gate's write, guarded by the resourceVersion, refused; until it runs on
// a node it cannot be Ready anyway.
func NeedsGate(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Spec.NodeName == "" || !inplace.HasGate(pod) {
		return false
	}
	if _, ok := inplace.GateStatus(pod); ok {
		return false
	}
	st, err := inplace.ParseState(pod)
	return err == nil && !inplace.InFlight(pod, st)
}
