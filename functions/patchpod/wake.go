package patchpod

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/settle"
)

// Changes tells waiters when a pod changes, or an EndpointSlice holding
// an endpoint of it (notify.Keys, keyed by "namespace/name").
type Changes interface {
	Changed(key string) (<-chan struct{}, func())
}

// Waker is what the watch handlers wake (notify.Keys).
type Waker interface{ Wake(key string) }

// watchedRecheck is Drain's default with Changes: a safety net for a lost
// wake-up only; the watch moves a draining pod on.
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

// pause waits, after a "not yet", for the pod's next change or for the
// asked delay to pass, within maxWait and half of what is left of ctx's
// deadline (so the delivery keeps time to answer). It reports whether to
// decide again; if not, err is to be answered as it is (its delay less
// what was waited). Without Changes it does not wait: the bus redelivers
// after the delay.
func pause(ctx context.Context, woken <-chan struct{}, err error) bool {
	var ny *settle.NotYetError
	if woken == nil || !errors.As(err, &ny) {
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
