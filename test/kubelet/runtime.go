package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// kind is what role a container plays in its pod.
type kind int

const (
	regular kind = iota
	initContainer
	sidecar // restartable init container (restartPolicy: Always)
)

// cstate is a runtime container's state, as the CRI reports it.
type cstate int

const (
	created cstate = iota
	running
	exited
)

// instance is one runtime container: what a containerd container is to
// the kubelet. It never changes identity; a restart is a new instance.
type instance struct {
	id       string // containerd://<64 hex>
	name     string // the container's name in the pod spec
	image    string // the spec image it was created from
	imageID  string // <repo>@sha256:<digest>
	restarts int32  // the restart count it was created with
	state    cstate
	created  time.Time
	started  time.Time
	finished time.Time
	exitCode int32
	reason   string // Completed, Error or StartError once exited
	message  string // why a start failed
	// startErr is the runtime's error starting it: its command names a
	// program its image lacks (missingProgram).
	startErr string
	// resources are what it was started with (a resize whose
	// resizePolicy is RestartContainer restarts it with the new ones).
	resources corev1.ResourceRequirements

	// exitAt is when a running instance exits by itself (a crashing image,
	// a container that runs to completion), with exitWith; zero if never.
	exitAt   time.Time
	exitWith int32
}

// sandbox is the pod's sandbox: its network namespace and IP.
type sandbox struct {
	ready bool
	ip    string
}

// podRuntime is what the container runtime holds for one pod: its sandbox
// and every container instance it created, oldest first. It changes only
// through the worker's actions and the containers' own exits.
type podRuntime struct {
	uid     types.UID
	sandbox *sandbox
	ctrs    []*instance
	// volumesMounted: the pod's claimed volumes are attached and mounted
	// (they stay so for the pod's life, across sandboxes).
	volumesMounted bool
	// changed is set when the runtime changes, for the next relist.
	changed bool
}

func newPodRuntime(uid types.UID) *podRuntime { return &podRuntime{uid: uid} }

// latest is the newest instance of the named container, or nil.
func (rt *podRuntime) latest(name string) *instance {
	for i := len(rt.ctrs) - 1; i >= 0; i-- {
		if rt.ctrs[i].name == name {
			return rt.ctrs[i]
		}
	}
	return nil
}

// add records a new instance, created at t.
func (rt *podRuntime) add(in *instance) {
	rt.ctrs = append(rt.ctrs, in)
	rt.changed = true
}

// nextExit is the earliest time a running instance exits by itself.
func (rt *podRuntime) nextExit() time.Time {
	var next time.Time
	for _, in := range rt.ctrs {
		if in.state == running {
			next = earliest(next, in.exitAt)
		}
	}
	return next
}

// exitDue makes every running instance due to exit by t exit.
func (rt *podRuntime) exitDue(t time.Time) {
	for _, in := range rt.ctrs {
		if in.state == running && !in.exitAt.IsZero() && !in.exitAt.After(t) {
			reason := "Completed"
			if in.exitWith != 0 {
				reason = "Error"
			}
			rt.exit(in, in.exitAt, in.exitWith, reason)
		}
	}
}

// exit ends a running (or created) instance at t.
func (rt *podRuntime) exit(in *instance, t time.Time, code int32, reason string) {
	if in.state == exited {
		return
	}
	in.state, in.finished, in.exitCode, in.reason = exited, t, code, reason
	in.exitAt = time.Time{}
	rt.changed = true
}

// running lists the running instances.
func (rt *podRuntime) running() []*instance {
	var out []*instance
	for _, in := range rt.ctrs {
		if in.state == running {
			out = append(out, in)
		}
	}
	return out
}

// snapshot is the runtime as one relist saw it: the kubelet's pod cache
// entry, from which a sync computes status and actions.
type snapshot struct {
	sandbox *sandbox   // nil: no sandbox
	ctrs    []instance // copies, oldest first
}

func (rt *podRuntime) snapshot() snapshot {
	s := snapshot{ctrs: make([]instance, len(rt.ctrs))}
	if rt.sandbox != nil {
		sb := *rt.sandbox
		s.sandbox = &sb
	}
	for i, in := range rt.ctrs {
		s.ctrs[i] = *in
	}
	return s
}

// differs reports whether a relist would generate an event between s and
// o: a container or the sandbox appeared, disappeared or changed state.
func (s snapshot) differs(o snapshot) bool {
	if (s.sandbox == nil) != (o.sandbox == nil) || s.sandbox != nil && s.sandbox.ready != o.sandbox.ready {
		return true
	}
	if len(s.ctrs) != len(o.ctrs) {
		return true
	}
	for i := range s.ctrs {
		if s.ctrs[i].id != o.ctrs[i].id || s.ctrs[i].state != o.ctrs[i].state {
			return true
		}
	}
	return false
}

// latest is the newest instance of the named container in s, or nil.
func (s snapshot) latest(name string) *instance {
	for i := len(s.ctrs) - 1; i >= 0; i-- {
		if s.ctrs[i].name == name {
			return &s.ctrs[i]
		}
	}
	return nil
}

// lastTwo returns the newest instance of the named container and the one
// before it (the kubelet reports at most these two).
func (s snapshot) lastTwo(name string) (cur, prev *instance) {
	for i := len(s.ctrs) - 1; i >= 0; i-- {
		if s.ctrs[i].name != name {
			continue
		}
		if cur == nil {
			cur = &s.ctrs[i]
			continue
		}
		return cur, &s.ctrs[i]
	}
	return cur, nil
}

// sandboxReady reports a ready sandbox (else the kubelet creates one).
func (s snapshot) sandboxReady() bool { return s.sandbox != nil && s.sandbox.ready }

// kindOf tells a sidecar from a plain init container.
func kindOf(c *corev1.Container, isInit bool) kind {
	switch {
	case !isInit:
		return regular
	case c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways:
		return sidecar
	default:
		return initContainer
	}
}

// earliest returns the earliest non-zero time of ts.
func earliest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}
