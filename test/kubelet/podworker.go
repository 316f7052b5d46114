package kubelet

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// resyncPeriod is how soon a pod whose sync succeeded is synced again
// anyway (the kubelet's syncFrequency).
const resyncPeriod = time.Minute

// workerPhase is where a pod worker is in the pod's life.
type workerPhase int

const (
	syncing     workerPhase = iota
	terminating             // stopping the pod's containers for good
	terminated              // nothing runs; only a deletion is left
)

// worker is the kubelet's pod worker for one pod, over a simulated clock.
// Each sync first generates the pod's status from the runtime as the last
// relist saw it and from what the previous sync's actions left in the
// reason cache, then runs its actions (kill, create the sandbox, pull,
// create, start), which keep the worker busy for their durations. The
// next sync waits for a relist after the previous one ended, and runs on
// a pod change, on a relist that saw the pod's containers change, or when
// the previous sync asked to be requeued (an error: ErrorRequeue; a crash
// loop: its back-off; else resyncPeriod). It is pure: a node calls
// advance with the time and does the I/O it returns.
type worker struct {
	h      host
	t      Timings
	epoch  time.Time // the node's first relist; relists follow every RelistPeriod
	jitter func(time.Duration) time.Duration
	uid    types.UID

	rt      *podRuntime
	snap    snapshot  // the runtime as the last relist after a change saw it
	dirtyAt time.Time // the first runtime change since snap; zero if none
	reasons map[string]reason
	crash   *backoffs // crash-loop back-off by container and image
	pulls   *backoffs // image pull back-off by image
	pullErr map[string]string

	poked     atomic.Bool // the pod changed (set by the informer)
	pokeDue   bool        // ... and advance has not acted on it yet
	want      bool        // a sync is due
	lastSync  time.Time   // when the last sync's actions ended; zero before the first
	requeueAt time.Time
	plan      *plan // the running sync's actions; nil when idle
	phase     workerPhase
	status    *corev1.PodStatus // the last status generated (the status manager's copy)
	unwritten *corev1.PodStatus // generated, not yet written
	deleting  bool              // stopped for a deletion: the pod is to be deleted

	// allocated are the resources admitted for each container (the
	// kubelet's allocation manager); resizePending is the PodResizePending
	// condition of a resize the node cannot admit, nil if none.
	allocated     map[string]corev1.ResourceRequirements
	resizePending *corev1.PodCondition
}

func newWorker(h host, t Timings, epoch time.Time, uid types.UID) *worker {
	return &worker{
		h: h, t: t, epoch: epoch, uid: uid, jitter: jitter,
		rt: newPodRuntime(uid), reasons: map[string]reason{},
		crash: newBackoffs(t), pulls: newBackoffs(t), pullErr: map[string]string{},
		want: true,
	}
}

// jitter adds up to 50% to d, as the kubelet's pod worker does.
func jitter(d time.Duration) time.Duration { return d + time.Duration(rand.Float64()*0.5*float64(d)) }

// poke says the pod changed in a way the kubelet syncs for.
func (w *worker) poke() { w.poked.Store(true) }

// result is what one advance asks of its caller.
type result struct {
	status *corev1.PodStatus // write this status (then call written)
	delete bool              // the pod's containers are stopped: delete it
	next   time.Time         // advance again then; zero: on the next pod change
}

// event kinds of a worker's timeline, in the order they happen at one time.
type event int

const (
	evNone event = iota
	evExit
	evStep
	evRequeue
	evRelist
)

// advance runs the pod's timeline up to now: containers exiting, the
// running sync's actions, relists and requeues in time order, then a sync
// the pod's change asks for. It returns as soon as there is a status to
// write or a deletion to do, and otherwise when to look again.
func (w *worker) advance(ctx context.Context, pod *corev1.Pod, now time.Time) result {
	pod = w.allocate(pod, now)
	if w.poked.Swap(false) {
		w.pokeDue = true
	}
	if w.phase == terminated && pod.DeletionTimestamp != nil {
		w.deleting = true
	}
	for w.unwritten == nil && !w.deleting {
		t, ev := w.nextEvent(now)
		if ev != evNone && !t.After(now) {
			w.process(ctx, pod, t, ev)
			w.maybeSync(pod, t)
			continue
		}
		if w.pokeDue {
			w.pokeDue, w.want = false, true
			continue
		}
		if !w.maybeSync(pod, now) {
			return result{next: t}
		}
	}
	return result{status: w.unwritten, delete: w.unwritten == nil, next: now}
}

// written records that the status advance returned is on the API server.
func (w *worker) written() { w.unwritten = nil }

// nextEvent is the earliest thing on the timeline, and what it is.
func (w *worker) nextEvent(now time.Time) (time.Time, event) {
	if w.phase == terminated {
		return time.Time{}, evNone
	}
	at, ev := time.Time{}, evNone
	consider := func(t time.Time, e event) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at, ev = t, e
		}
	}
	consider(w.rt.nextExit(), evExit)
	if w.plan != nil {
		consider(w.plan.at, evStep)
	}
	consider(w.requeueAt, evRequeue)
	switch {
	case !w.dirtyAt.IsZero():
		consider(w.relistAtOrAfter(w.dirtyAt), evRelist)
	case w.want && w.plan == nil && !w.cacheFresh(now):
		consider(w.relistAfter(w.lastSync), evRelist)
	}
	return at, ev
}

// process handles one timeline event at t.
func (w *worker) process(ctx context.Context, pod *corev1.Pod, t time.Time, ev event) {
	switch ev {
	case evExit:
		w.rt.exitDue(t)
	case evStep:
		w.step(ctx, pod, t)
	case evRequeue:
		w.requeueAt, w.want = time.Time{}, true
	case evRelist:
		w.relist(t)
	}
	if w.rt.changed {
		w.rt.changed = false
		if w.dirtyAt.IsZero() {
			w.dirtyAt = t
		}
	}
}

// relist is the PLEG's look at the pod's containers at t: a change since
// the last look wakes the worker.
func (w *worker) relist(t time.Time) {
	if w.dirtyAt.IsZero() {
		return
	}
	s := w.rt.snapshot()
	if s.differs(w.snap) {
		w.want = true
	}
	w.snap, w.dirtyAt = s, time.Time{}
}

// cacheFresh reports whether, at t, the pod cache holds a relist later
// than the end of the last sync (the kubelet's podCache.GetNewerThan): a
// sync may start. An unchanged runtime looks the same at every relist, so
// only a change not yet relisted holds it back.
func (w *worker) cacheFresh(t time.Time) bool {
	if !w.dirtyAt.IsZero() && !w.relistAtOrAfter(w.dirtyAt).After(t) {
		return false
	}
	return w.lastSync.IsZero() || w.relistAtOrBefore(t).After(w.lastSync)
}

func (w *worker) relistAtOrBefore(t time.Time) time.Time {
	if t.Before(w.epoch) {
		return time.Time{}
	}
	p := w.t.RelistPeriod
	return w.epoch.Add(t.Sub(w.epoch) / p * p)
}

func (w *worker) relistAtOrAfter(t time.Time) time.Time {
	r := w.relistAtOrBefore(t)
	switch {
	case r.IsZero():
		return w.epoch
	case r.Equal(t):
		return r
	}
	return r.Add(w.t.RelistPeriod)
}

func (w *worker) relistAfter(t time.Time) time.Time {
	return w.relistAtOrAfter(t.Add(time.Nanosecond))
}
