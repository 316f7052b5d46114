package patchpod

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Changes tells waiters when a pod changes, or an EndpointSlice holding
// an endpoint of it (notify.Keys, keyed by "namespace/name").
type Changes interface {
	Changed(key string) (<-chan struct{}, func())
}

// Waker is what the watch handlers wake (notify.Keys).
type Waker interface{ Wake(key string) }

// watchedRecheck is DrainRecheck's and BusyRecheck's default with Changes:
// a safety net for a lost wake-up only; the watch moves a draining pod on.
const watchedRecheck = 10 * time.Second

// maxWait bounds one wait within a delivery (and half of what is left of
// its deadline): past it the delivery answers "not yet" and the bus
// redelivers it.
const maxWait = 20 * time.Second

// WatchPods wakes the key of each pod that changes: register it on the
// pod informer that feeds Changes (its Ready condition, its state, its
// gate).
func WatchPods(w Waker) cache.ResourceEventHandler {
	wake := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			w.Wake(p.Namespace + "/" + p.Name)
		}
	}
	return cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) { wake(obj) }, DeleteFunc: wake}
}

// WatchSlices wakes the key of each pod an EndpointSlice held or holds an
// endpoint of, when the slice changes: register it on the EndpointSlice
// informer that feeds patch-pod's SliceReader.
func WatchSlices(w Waker) cache.ResourceEventHandler {
	wake := func(objs ...any) {
		for _, obj := range objs {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
				for _, key := range kube.EndpointPods(s) {
					w.Wake(key)
				}
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) { wake(old, obj) },
		DeleteFunc: func(obj any) { wake(obj) },
	}
}

// changed is Changes.Changed for the plan's pod, or no channel without
// Changes.
func (f *Function) changed(key string) (<-chan struct{}, func()) {
	if f.d.Changes == nil {
		return nil, func() {}
	}
	return f.d.Changes.Changed(key)
}

// shortWait is the longest timer a delivery waits for in-process (the
// rest of a grace, say); a longer one is the bus's (NakWithDelay), so a
// runner's worker is not held for it.
const shortWait = time.Second

// poll is how soon a delivery that waits on the watch looks again when
// every waiting slot is taken: it polls, as without Changes.
const poll = 250 * time.Millisecond

// watching marks a "not yet" that a change of the pod or of its
// EndpointSlices ends (leaving service, another upgrade's end): worth
// waiting for in-process, whatever its safety-net delay.
type watching struct{ error }

func (w watching) Unwrap() error { return w.error }

// onWatch marks err (a "not yet") as ended by the watch.
func onWatch(err error) error { return watching{err} }

// pause waits, after a "not yet", for the pod's next change or for the
// asked delay to pass, within maxWait and half of what is left of ctx's
// deadline (so the delivery keeps time to answer). It reports whether to
// decide again; if not, err is to be answered as it is (its delay less
// what was waited). It waits only for a short timer or the watch, and
// in at most Waiters deliveries at once (the others poll), so the
// runner's workers stay free for other pods. Without Changes it does not
// wait: the bus redelivers after the delay.
func (f *Function) pause(ctx context.Context, woken <-chan struct{}, err error) bool {
	var ny *settle.NotYetError
	if woken == nil || !errors.As(err, &ny) {
		return false
	}
	var w watching
	watched := errors.As(err, &w)
	if !watched && ny.Delay > shortWait {
		return false
	}
	select {
	case f.waiters <- struct{}{}:
		defer func() { <-f.waiters }()
	default:
		if watched {
			ny.Delay = min(ny.Delay, poll)
		}
		return false
	}
	budget := maxWait
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	if budget <= 0 {
		return false
	}
	t := time.NewTimer(min(ny.Delay, budget))
	defer t.Stop()
	select {
	case <-woken:
		return true
	case <-t.C:
		if ny.Delay <= budget {
			return true
		}
		ny.Delay -= budget
		return false
	case <-ctx.Done():
		return false
	}
}
