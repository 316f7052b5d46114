package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// maybeSync starts a sync at t when one is due, the worker is idle and the
// pod cache is fresh enough, and reports whether it did.
func (w *worker) maybeSync(pod *corev1.Pod, t time.Time) bool {
	if w.plan != nil || !w.want || w.phase == terminated || !w.cacheFresh(t) {
		return false
	}
	w.want = false
	if pod.DeletionTimestamp != nil || w.phase == terminating {
		w.startTerminating(pod, t)
		return true
	}
	st := w.generate(pod, w.snap, false, t)
	if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		// The pod is done: the worker stops what is left (the sandbox)
		// at the next relist, as the kubelet's terminating sync does.
		w.phase, w.want = terminating, true
		w.lastSync = t
		return true
	}
	w.startPlan(pod, computeActions(pod, w.snap), t)
	return true
}

// generate makes the status a sync writes: the status manager's copy and
// the next write.
func (w *worker) generate(pod *corev1.Pod, s snapshot, terminal bool, t time.Time) corev1.PodStatus {
	old := pod.Status
	if w.status != nil {
		old = *w.status
	}
	st := generateStatus(statusInput{pod: pod, snap: s, reasons: w.reasons, old: old,
		hostIP: w.h.hostIP(), terminal: terminal, now: t})
	st.Conditions = w.resizeConditions(st.Conditions, old.Conditions)
	w.status, w.unwritten = &st, &st
	return st
}

// startTerminating is the kubelet's terminating sync: the status as seen,
// then every running container stopped within the grace period and the
// sandbox stopped.
func (w *worker) startTerminating(pod *corev1.Pod, t time.Time) {
	w.phase = terminating
	w.generate(pod, w.snap, false, t)
	grace := specGrace(pod)
	if g := pod.DeletionGracePeriodSeconds; g != nil && pod.DeletionTimestamp != nil {
		grace = time.Duration(*g) * time.Second
	}
	w.plan = &plan{ops: []op{{kind: opKillPod, grace: grace}}, at: t, snap: w.snap, results: map[string]*reason{}}
}

// finishTerminating writes the final status from the stopped runtime; the
// phase is final now that nothing runs. A pod being deleted is deleted
// once that status is written.
func (w *worker) finishTerminating(pod *corev1.Pod, t time.Time) {
	w.phase, w.plan, w.lastSync = terminated, nil, t
	w.generate(pod, w.rt.snapshot(), true, t)
	w.deleting = pod.DeletionTimestamp != nil
}

// startPlan starts a sync's actions at t.
func (w *worker) startPlan(pod *corev1.Pod, a podActions, t time.Time) {
	p := &plan{at: t, snap: w.snap, results: map[string]*reason{}}
	grace := specGrace(pod)
	switch {
	case a.killPod:
		p.ops = append(p.ops, op{kind: opKillPod, grace: grace})
		if !a.createSandbox {
			break
		}
		if claimsVolumes(pod) && !w.rt.volumesMounted {
			p.ops = append(p.ops, op{kind: opVolumes})
		}
		p.ops = append(p.ops, op{kind: opSandbox})
	default:
		for _, k := range a.kill {
			p.ops = append(p.ops, op{kind: opKill, id: k.id, message: k.message, grace: grace})
		}
	}
	if !a.killPod || a.createSandbox {
		for _, i := range a.initToStart {
			c := &pod.Spec.InitContainers[i]
			p.ops = append(p.ops, op{kind: opStart, spec: c, isInit: true, abortOnFail: kindOf(c, true) == initContainer})
		}
		for _, i := range a.toStart {
			p.ops = append(p.ops, op{kind: opStart, spec: &pod.Spec.Containers[i]})
		}
	}
	w.plan = p
}

// finishSync ends a sync's actions at t: the reason cache takes each start's
// outcome, and the pod is requeued (ErrorRequeue after a failure, when a
// crash-loop back-off ends, or resyncPeriod).
func (w *worker) finishSync(p *plan, t time.Time) {
	w.plan, w.lastSync = nil, t
	failed := false
	for name, r := range p.results {
		if r == nil {
			delete(w.reasons, name)
			continue
		}
		w.reasons[name], failed = *r, true
	}
	after := resyncPeriod
	switch {
	case !p.backoffUntil.IsZero():
		after = min(max(p.backoffUntil.Sub(t), 0), resyncPeriod)
	case failed:
		after = min(w.t.ErrorRequeue, resyncPeriod)
	}
	w.requeueAt = t.Add(w.jitter(after))
}

// claimsVolumes reports whether the pod mounts a PersistentVolumeClaim
// (an ephemeral volume is one too): its volumes are attached to the node
// and mounted before its sandbox is created.
func claimsVolumes(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}

// specGrace is the pod's termination grace period (default 30s).
func specGrace(pod *corev1.Pod) time.Duration {
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return 30 * time.Second
}
