package verify

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// nextLook is when a waiting decision can next change with no change of
// the pod: a deadline, the end of a transient pull error's allowance, a
// container's min-ready time. Everything else changes the pod's bearing
// (inplace.Bearing), and the pod watcher's pod.updated wakes verify up for
// it; this is the timer's next
// delivery (at most the Recheck safety net, so a lost pod.updated costs
// that much, no more). Zero when no such time is ahead.
func nextLook(pod *corev1.Pod, st *inplace.State, r inplace.Result, now time.Time, l limits) time.Duration {
	var at []time.Time
	if st.Phase == inplace.PhaseRollingBack {
		at = append(at, st.RollbackAt.Add(l.rollback()))
		if transient[r.Reason] {
			at = append(at, st.RollbackAt.Add(min(l.pullErrors, l.rollback())))
		}
	} else {
		at = append(at, st.PatchedAt.Add(l.verify))
		if transient[r.Reason] {
			at = append(at, st.PatchedAt.Add(min(l.pullErrors, l.verify)))
		}
	}
	if r.Verdict == inplace.Succeeded && l.minReady > 0 {
		for _, c := range st.Containers {
			if cs := inplace.ContainerStatus(pod, c.Name); cs != nil && cs.State.Running != nil {
				at = append(at, cs.State.Running.StartedAt.Add(l.minReady+time.Second))
			}
		}
	}
	var next time.Duration
	for _, t := range at {
		if d := t.Sub(now); d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	return next
}

// Waker is what WatchPods wakes (notify.Keys).
type Waker interface{ Wake(key string) }

// WatchPods wakes the key ("namespace/name") of each pod that changes:
// register it on the pod informer behind the Reader that feeds Changes.
func WatchPods(w Waker) cache.ResourceEventHandler {
	wake := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			w.Wake(p.Namespace + "/" + p.Name)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: wake, UpdateFunc: func(_, obj any) { wake(obj) }, DeleteFunc: wake}
}
