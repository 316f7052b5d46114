package kube

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/events"
)

// changes tells waiters when a workload, or a ReplicaSet it owns, changed
// in the cache: a template sync waits for the controller's next
// status this way instead of polling.
type changes struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]bool
}

// Changed returns a channel closed at the next change of the workload ref
// (its own object, its status included, or a ReplicaSet it controls), and
// a func to stop waiting. Ask before reading, so a change in between is not missed.
func (c *Cache) Changed(ref events.ObjectRef) (<-chan struct{}, func()) {
	key := ref.Kind + "/" + ref.Namespace + "/" + ref.Name
	ch := make(chan struct{})
	c.changes.mu.Lock()
	defer c.changes.mu.Unlock()
	if c.changes.waiters == nil {
		c.changes.waiters = map[string]map[chan struct{}]bool{}
	}
	if c.changes.waiters[key] == nil {
		c.changes.waiters[key] = map[chan struct{}]bool{}
	}
	c.changes.waiters[key][ch] = true
	return ch, func() {
		c.changes.mu.Lock()
		defer c.changes.mu.Unlock()
		if c.changes.waiters[key][ch] {
			delete(c.changes.waiters[key], ch)
			close(ch)
		}
	}
}

// notify wakes the waiters of key.
func (c *changes) notify(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.waiters[key] {
		close(ch)
	}
	delete(c.waiters, key)
}

// watchChanges registers the handlers that feed Changed on the workload
// informers: each object wakes its own key and its controller's.
func (c *Cache) watchChanges(informers ...cache.SharedIndexInformer) error {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.changed(obj) },
		UpdateFunc: func(_, obj any) { c.changed(obj) },
		DeleteFunc: func(obj any) { c.changed(obj) },
	}
	for _, inf := range informers {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cache) changed(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if k := kindOf(obj); k != "" {
		c.changes.notify(k + "/" + m.GetNamespace() + "/" + m.GetName())
	}
	if ref := metav1.GetControllerOf(m); ref != nil {
		c.changes.notify(ref.Kind + "/" + m.GetNamespace() + "/" + ref.Name)
	}
}

// kindOf names the kinds Changed is asked about.
func kindOf(obj any) string {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *appsv1.StatefulSet:
		return "StatefulSet"
	case *appsv1.DaemonSet:
		return "DaemonSet"
	case *appsv1.ReplicaSet:
		return "ReplicaSet"
	}
	return ""
}
