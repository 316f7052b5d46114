package prepull

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/core/pulls"
)

// watchedRecheck is Recheck's default with Changes: a safety net only.
const watchedRecheck = 30 * time.Second

// maxWait bounds one wait for a node's pre-pull pods to change within a
// delivery (and half of what is left of its deadline).
const maxWait = 20 * time.Second

// changed is Changes.Changed, or a channel that never closes.
func (f *Function) changed(node string) (<-chan struct{}, func()) {
	if f.d.Changes == nil || node == "" {
		return nil, func() {}
	}
	return f.d.Changes.Changed(node)
}

// Waker is what Watch wakes (notify.Keys).
type Waker interface{ Wake(key string) }

// Watch wakes w's key of a node each time one of its pre-pull pods is
// added, changes or goes: register it on the pod informer that feeds
// Changes.
func Watch(w Waker) cache.ResourceEventHandler {
	wake := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok && pulls.IsPrepull(p) && p.Spec.NodeName != "" {
			w.Wake(p.Spec.NodeName)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: wake, UpdateFunc: func(_, obj any) { wake(obj) }, DeleteFunc: wake}
}
