package kubelet

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// start creates and starts a new instance of c from spec's image.
func (s *syncer) start(c *ctr, spec *corev1.Container, img Image, imageID string) time.Time {
	if c.cur != nil {
		c.restarts++
		if !c.cur.killed {
			s.bumpCrash(c, spec.Image)
		}
	}
	c.prev, c.cur = c.cur, &instance{
		id:        s.h.newContainerID(),
		image:     spec.Image,
		imageID:   imageID,
		startedAt: s.now,
	}
	c.running, c.wait = true, waiting{}
	c.readyAt = s.now.Add(s.t.Start)
	c.exitAt, c.exitCode = time.Time{}, 0
	switch {
	case img.Crash:
		c.exitAt, c.exitCode = s.now.Add(s.t.CrashAfter), 1
	case c.kind == initContainer, c.kind == regular && s.pod.Spec.RestartPolicy != corev1.RestartPolicyAlways:
		c.exitAt = s.now.Add(s.t.Run)
	}
	s.event(spec, corev1.EventTypeNormal, "Created", "Container created")
	s.event(spec, corev1.EventTypeNormal, "Started", "Container started")
	return earliest(c.readyAt, c.exitAt)
}

// bumpCrash advances the crash-loop back-off of image: the first restart
// after an exit is immediate, later ones wait initial, 2×initial, ... max.
func (s *syncer) bumpCrash(c *ctr, image string) {
	b := c.crash[image]
	if b == nil {
		b = &backoff{}
		c.crash[image] = b
	}
	b.next(s.now, s.t)
}

// finish records that the running instance ended at t.
func (c *ctr) finish(t time.Time, code int32, reason string, killed bool) {
	c.cur.finishedAt, c.cur.exitCode, c.cur.reason, c.cur.killed = t, code, reason, killed
	c.running, c.op = false, opNone
	c.readyAt, c.exitAt = time.Time{}, time.Time{}
	if b := c.crash[c.cur.image]; b != nil && !killed {
		b.since = t // a crash-loop window counts from the exit
	}
}

// shouldRestart reports whether an exited container is started again:
// always after a kill for a spec change, sidecars always, plain init
// containers until they succeed (unless restartPolicy Never), regular
// containers per the pod's restartPolicy.
func (c *ctr) shouldRestart(policy corev1.RestartPolicy) bool {
	if c.cur.killed {
		return true
	}
	failed := c.cur.exitCode != 0
	switch c.kind {
	case sidecar:
		return true
	case initContainer:
		return failed && policy != corev1.RestartPolicyNever
	}
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return failed
	}
	return true
}

// succeeded reports a plain init container that ran to completion.
func (c *ctr) succeeded() bool {
	return c.cur != nil && !c.running && c.op != opKill && !c.cur.killed && c.cur.exitCode == 0
}

// ready reports a running container past its start time.
func (c *ctr) ready(now time.Time) bool {
	return c.running && c.op != opKill && !c.readyAt.IsZero() && !now.Before(c.readyAt)
}

// event records a kubelet event about container spec of the pod.
func (s *syncer) event(spec *corev1.Container, eventtype, reason, message string) {
	s.h.record(containerRef(s.pod, spec.Name), eventtype, reason, message)
}

// containerRef is the kubelet's reference to a container of a pod (the
// involvedObject of its events).
func containerRef(pod *corev1.Pod, name string) *corev1.ObjectReference {
	path := fmt.Sprintf("spec.containers{%s}", name)
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			path = fmt.Sprintf("spec.initContainers{%s}", name)
		}
	}
	return &corev1.ObjectReference{
		Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: path,
	}
}

// afterNow returns t if it is after now, else the zero time.
func afterNow(t, now time.Time) time.Time {
	if t.After(now) {
		return t
	}
	return time.Time{}
}
