package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// opKind is one action of a sync.
type opKind int

const (
	opKillPod opKind = iota // stop every running container, then the sandbox
	opKill                  // stop one container
	opVolumes               // attach and mount the pod's claimed volumes
	opSandbox               // create a sandbox (the pod IP)
	opStart                 // ensure the image, create and start a container
)

// op is one action with what it needs.
type op struct {
	kind        opKind
	grace       time.Duration     // opKillPod, opKill: stopping takes min(Stop, grace)
	id, message string            // opKill: the instance, the Killing message
	spec        *corev1.Container // opStart
	isInit      bool
	abortOnFail bool // a plain init container: the sync stops if it fails to start
}

// stage is where an opStart is.
type stage int

const (
	stBegin stage = iota
	stPulled
	stPullFailed
	stCreated
	stDone
)

// plan is a running sync's actions: they run in order, each taking its
// time, and the worker is busy until the last one ends.
type plan struct {
	ops   []op
	i     int
	at    time.Time // when the current op (or its next stage) is due
	stage stage
	snap  snapshot // what the sync saw: restart counts, crash back-off

	pull    pullResult // opStart: the pull in progress
	pullErr string     // opStart: why the pull failed
	stopped []*instance

	results      map[string]*reason // start outcomes by container: nil is success
	backoffUntil time.Time          // the earliest end of a crash-loop back-off met
}

// step runs what of the plan is due at t.
func (w *worker) step(ctx context.Context, pod *corev1.Pod, t time.Time) {
	p := w.plan
	for p.i < len(p.ops) && !p.at.After(t) {
		next, done := w.run(ctx, pod, p, &p.ops[p.i], t)
		if !done {
			p.at = next
			return
		}
		p.i, p.stage, p.stopped = p.i+1, stBegin, nil
	}
	if p.i < len(p.ops) {
		return
	}
	if w.phase == terminating {
		w.finishTerminating(pod, t)
		return
	}
	w.finishSync(p, t)
}

// run advances op at t; done reports the op finished, else next is when it
// goes on.
func (w *worker) run(ctx context.Context, pod *corev1.Pod, p *plan, o *op, t time.Time) (next time.Time, done bool) {
	switch o.kind {
	case opKillPod:
		return w.killPod(pod, p, o, t)
	case opKill:
		return w.killOne(pod, p, o, t)
	case opVolumes:
		if p.stage == stBegin && w.t.VolumeAttach > 0 {
			p.stage = stDone
			return t.Add(w.t.VolumeAttach), false
		}
		w.rt.volumesMounted = true
		return t, true
	case opSandbox:
		if p.stage == stBegin && w.t.Sandbox > 0 {
			p.stage = stDone // RunPodSandbox: the sandbox and its network
			return t.Add(w.t.Sandbox), false
		}
		w.rt.sandbox = &sandbox{ready: true, ip: w.h.podIP(pod)}
		w.rt.changed = true
		return t, true
	}
	next, done = w.start(ctx, pod, p, o, t)
	if done && p.results[o.spec.Name] != nil && o.abortOnFail {
		p.i = len(p.ops) - 1 // an init container failed: the sync ends here
	}
	return next, done
}

// killPod stops every running container at once ("Stopping container"),
// each taking min(Stop, grace), then the sandbox.
func (w *worker) killPod(pod *corev1.Pod, p *plan, o *op, t time.Time) (time.Time, bool) {
	if p.stopped == nil {
		p.stopped = append([]*instance{}, w.rt.running()...)
		for _, in := range p.stopped {
			w.event(pod, in.name, corev1.EventTypeNormal, "Killing", "Stopping container "+in.name)
		}
		if len(p.stopped) > 0 {
			return t.Add(min(w.t.Stop, o.grace)), false
		}
	}
	for _, in := range p.stopped {
		w.rt.exit(in, t, 0, "Completed")
	}
	if w.rt.sandbox != nil && w.rt.sandbox.ready {
		w.rt.sandbox.ready = false
		w.rt.changed = true
	}
	return t, true
}

// killOne stops one container for a definition change; it exits 0, as an
// application handling SIGTERM does.
func (w *worker) killOne(pod *corev1.Pod, p *plan, o *op, t time.Time) (time.Time, bool) {
	if p.stopped == nil {
		for _, in := range w.rt.running() {
			if in.id == o.id {
				p.stopped = []*instance{in}
			}
		}
		if p.stopped == nil {
			return t, true
		}
		w.event(pod, p.stopped[0].name, corev1.EventTypeNormal, "Killing", o.message)
		return t.Add(min(w.t.Stop, o.grace)), false
	}
	w.rt.exit(p.stopped[0], t, 0, "Completed")
	return t, true
}

// event records a kubelet event about a container of the pod.
func (w *worker) event(pod *corev1.Pod, container, eventtype, reason, message string) {
	w.h.record(containerRef(pod, container), eventtype, reason, message)
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

// podRef is how the kubelet names a pod in messages (format.Pod).
func podRef(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
