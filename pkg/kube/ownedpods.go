package kube

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// ownedPods keeps, for each owner key of the pod cache's byOwner index that
// has been read ("ReplicaSet/ns/name"), that owner's pods sorted by name,
// and brings the list up to date at each read from the pods changed since:
// compute-spec lists a workload's pods at every outcome of its rollout,
// and listing a thousand pods from the index and sorting them was most of
// that read, while one or two of them had changed.
//
// The index function (index) is called by the cache's store, under its
// lock, for the old and the new object of every add, update, delete and
// relist, before the store lets a reader in; it marks the pod's key dirty
// in the lists of its owners. A read takes the dirty keys and reads each
// pod again from the store, so a list never lags behind the store: a
// change made after the keys were taken is marked again for the next read.
type ownedPods struct {
	mu    sync.Mutex // guards lists and each list's dirty
	lists map[string]*ownedList
}

// ownedList is one owner's pods.
type ownedList struct {
	read  sync.Mutex // one read at a time brings pods up to date
	dirty map[string]struct{}

	built bool           // pods is the owner's pods, dirty aside
	pods  []*corev1.Pod  // by name
	at    map[string]int // position in pods by store key
}

// index is ownerIndex that also marks the pod dirty in its owners' lists.
func (o *ownedPods) index(obj any) ([]string, error) {
	owners, err := ownerIndex(obj)
	if len(owners) == 0 || err != nil {
		return owners, err
	}
	key, kerr := cache.MetaNamespaceKeyFunc(obj)
	if kerr != nil {
		return owners, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, owner := range owners {
		if l := o.lists[owner]; l != nil && l.built {
			if l.dirty == nil {
				l.dirty = map[string]struct{}{}
			}
			l.dirty[key] = struct{}{}
		}
	}
	return owners, nil
}

// of returns owner's pods by name, in a slice of the caller's own.
func (o *ownedPods) of(store cache.Indexer, owner string) ([]*corev1.Pod, error) {
	o.mu.Lock()
	if o.lists == nil {
		o.lists = map[string]*ownedList{}
	}
	l := o.lists[owner]
	if l == nil {
		l = &ownedList{}
		o.lists[owner] = l
	}
	o.mu.Unlock()

	l.read.Lock()
	defer l.read.Unlock()
	o.mu.Lock()
	dirty, built := l.dirty, l.built
	l.dirty = nil
	o.mu.Unlock()
	if built && !l.update(store, owner, dirty) {
		built = false
	}
	if !built {
		if err := o.build(store, owner, l); err != nil {
			return nil, err
		}
	}
	return slices.Clone(l.pods), nil
}

// build lists owner's pods from the index. The list is marked built
// before the index is read, so that a change during the read is marked
// dirty for the next read.
func (o *ownedPods) build(store cache.Indexer, owner string, l *ownedList) error {
	o.mu.Lock()
	l.built, l.dirty = true, nil
	o.mu.Unlock()
	objs, err := store.ByIndex(byOwner, owner)
	if err != nil {
		o.mu.Lock()
		l.built = false
		o.mu.Unlock()
		return err
	}
	pods := toPods(objs)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	l.pods, l.at = pods, make(map[string]int, len(pods))
	for i, p := range pods {
		l.at[p.Namespace+"/"+p.Name] = i
	}
	return nil
}

// update puts the store's current object of each dirty key in its place;
// false when one is no longer the owner's, or is new to it (the list
// must be built again).
func (l *ownedList) update(store cache.Indexer, owner string, dirty map[string]struct{}) bool {
	for key := range dirty {
		i, had := l.at[key]
		obj, exists, err := store.GetByKey(key)
		switch {
		case err != nil:
			return false
		case !had && !exists: // a pod that came and went
			continue
		case !had || !exists:
			return false
		}
		owners, _ := ownerIndex(obj)
		p, ok := obj.(*corev1.Pod)
		if !ok || !slices.Contains(owners, owner) {
			return false
		}
		l.pods[i] = p
	}
	return true
}
