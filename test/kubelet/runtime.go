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

// op is an operation in progress on a container.
type op int

const (
	opNone op = iota
	opPull
	opKill
)

// instance is one runtime container: what a containerd container is to
// the kubelet.
type instance struct {
	id         string // containerd://<64 hex>
	image      string // the spec image it was created from
	imageID    string // <repo>@sha256:<digest>
	startedAt  time.Time
	finishedAt time.Time
	exitCode   int32
	reason     string // Completed or Error once finished
	killed     bool   // stopped by the kubelet (spec change, deletion), not exited
}

// waiting is why a container that should run does not.
type waiting struct{ reason, message string }

// backoff is one exponential back-off entry (crash loop or image pull).
type backoff struct {
	dur     time.Duration
	since   time.Time // failure (pull) or exit (crash) the window counts from
	err     string    // the pull error, for ImagePullBackOff messages
	evented time.Time // window for which a BackOff event was already recorded
}

func (b *backoff) until() time.Time { return b.since.Add(b.dur) }

// next doubles the back-off (from initial, capped at max) from since.
func (b *backoff) next(since time.Time, t Timings) {
	switch {
	case b.dur == 0:
		b.dur = t.BackoffInitial
	case b.dur*2 > t.BackoffMax:
		b.dur = t.BackoffMax
	default:
		b.dur *= 2
	}
	b.since = since
}

// ctr is the node's view of one container of a pod across its restarts.
type ctr struct {
	name     string
	kind     kind
	restarts int32
	cur      *instance // latest instance; nil before the first start
	prev     *instance // the instance before cur (lastState while running)
	running  bool
	readyAt  time.Time // running: when it becomes ready
	exitAt   time.Time // running: when it exits by itself; zero if never
	exitCode int32     // running: the code it will exit with

	op      op
	opUntil time.Time
	opImage string     // the spec image being pulled
	pull    pullResult // the pull in progress

	wait  waiting
	pulls map[string]*backoff // image pull back-off by spec image
	crash map[string]*backoff // crash-loop back-off by spec image
}

// podRuntime is the node's state of one pod.
type podRuntime struct {
	uid         types.UID
	podIP       string
	startTime   time.Time
	ctrs        map[string]*ctr
	initialized bool            // all init containers done once; stays true
	finishing   corev1.PodPhase // the final phase, while sidecars are stopped
	terminal    corev1.PodPhase // Succeeded or Failed once the pod has finished
	stopped     bool            // terminating: every container has stopped
}

func newPodRuntime(uid types.UID, now time.Time) *podRuntime {
	return &podRuntime{uid: uid, startTime: now, ctrs: map[string]*ctr{}}
}

// ctr returns the state of the named container, creating it.
func (rt *podRuntime) ctr(name string, k kind) *ctr {
	c, ok := rt.ctrs[name]
	if !ok {
		c = &ctr{name: name, kind: k, pulls: map[string]*backoff{}, crash: map[string]*backoff{}}
		rt.ctrs[name] = c
	}
	return c
}

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
