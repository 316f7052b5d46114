package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// advance moves the pod's containers towards its spec at s.now and returns
// when it next needs attention (zero: only when the pod changes).
func (s *syncer) advance(rt *podRuntime) time.Time {
	if s.pod.DeletionTimestamp != nil {
		return s.terminate(rt)
	}
	if rt.terminal != "" {
		return time.Time{}
	}
	if rt.finishing != "" {
		return s.finish(rt)
	}
	next, blocked := s.advanceInit(rt)
	if blocked {
		return next
	}
	rt.initialized = true
	for i := range s.pod.Spec.Containers {
		spec := &s.pod.Spec.Containers[i]
		next = earliest(next, s.step(rt.ctr(spec.Name, regular), spec))
	}
	return earliest(next, s.finishIfDone(rt))
}

// advanceInit runs the init containers in order: each plain one to
// completion and each sidecar until started, before the next. Once the pod
// is initialized, plain init containers are left alone (a changed image is
// not re-run) and sidecars are kept running like regular containers.
func (s *syncer) advanceInit(rt *podRuntime) (next time.Time, blocked bool) {
	for i := range s.pod.Spec.InitContainers {
		spec := &s.pod.Spec.InitContainers[i]
		k := kindOf(spec, true)
		c := rt.ctr(spec.Name, k)
		if k == initContainer && (rt.initialized || c.succeeded()) {
			continue
		}
		next = earliest(next, s.step(c, spec))
		if rt.initialized {
			continue
		}
		if k == initContainer && !c.succeeded() || k == sidecar && !c.running {
			return next, true
		}
	}
	return next, false
}

// finishIfDone ends a pod whose regular containers have all exited for
// good (restartPolicy Never/OnFailure): its sidecars are stopped, then the
// pod is Succeeded or Failed.
func (s *syncer) finishIfDone(rt *podRuntime) time.Time {
	if s.pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		return time.Time{}
	}
	failed := false
	for _, spec := range s.pod.Spec.Containers {
		c := rt.ctrs[spec.Name]
		if c == nil || c.cur == nil || c.running || c.op != opNone || c.shouldRestart(s.pod.Spec.RestartPolicy) {
			return time.Time{}
		}
		failed = failed || c.cur.exitCode != 0
	}
	rt.finishing = corev1.PodSucceeded
	if failed {
		rt.finishing = corev1.PodFailed
	}
	return s.finish(rt)
}

// finish stops what still runs (sidecars) of a pod whose regular
// containers are done, then makes its phase final.
func (s *syncer) finish(rt *podRuntime) time.Time {
	if next, stopping := s.stopAll(rt, s.t.Stop); stopping {
		return next
	}
	rt.terminal = rt.finishing
	return time.Time{}
}

// terminate stops every container of a pod being deleted, within its
// grace period; rt.stopped says when all have stopped.
func (s *syncer) terminate(rt *podRuntime) time.Time {
	stop := s.t.Stop
	if g := s.pod.DeletionGracePeriodSeconds; g != nil && time.Duration(*g)*time.Second < stop {
		stop = time.Duration(*g) * time.Second
	}
	next, stopping := s.stopAll(rt, stop)
	rt.stopped = !stopping
	return next
}

// stopAll kills every running container (Killing "Stopping container"),
// abandons pulls, and reports whether any is still stopping.
func (s *syncer) stopAll(rt *podRuntime, stop time.Duration) (time.Time, bool) {
	var next time.Time
	for _, spec := range allContainers(s.pod) {
		c := rt.ctrs[spec.Name]
		if c == nil {
			continue
		}
		if c.op == opPull {
			c.op = opNone
		}
		if c.running && c.op != opKill {
			s.event(spec, corev1.EventTypeNormal, "Killing", "Stopping container "+spec.Name)
			s.kill(c, stop)
		}
		if c.op == opKill {
			if s.now.Before(c.opUntil) {
				next = earliest(next, c.opUntil)
				continue
			}
			c.finish(c.opUntil, 0, "Completed", true)
		}
		c.wait = waiting{}
	}
	return next, !next.IsZero()
}

// allContainers lists the init containers, then the regular ones.
func allContainers(pod *corev1.Pod) []*corev1.Container {
	out := make([]*corev1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}
