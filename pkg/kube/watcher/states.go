package watcher

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// states keeps each pod's state annotation as last parsed, by UID: the
// watcher sees every update of every pod, and most (the kubelet's status
// writes) leave the annotation as it was. A state kept is shared, read
// only.
type states struct {
	mu sync.Mutex
	m  map[types.UID]parsed
}

type parsed struct {
	raw string
	st  *inplace.State
}

// parse is pod's state (parse), from the last parse of the same
// annotation of the same pod when there is one.
func (s *states) parse(pod *corev1.Pod) *inplace.State {
	raw, ok := pod.Annotations[inplace.StateAnnotation]
	if !ok {
		s.forget(pod.UID)
		return nil
	}
	s.mu.Lock()
	c, hit := s.m[pod.UID]
	s.mu.Unlock()
	if hit && c.raw == raw {
		return c.st
	}
	st := parse(pod)
	s.mu.Lock()
	if s.m == nil {
		s.m = map[types.UID]parsed{}
	}
	s.m[pod.UID] = parsed{raw: raw, st: st}
	s.mu.Unlock()
	return st
}

// forget drops what is kept of a pod (deleted, or without a state).
func (s *states) forget(uid types.UID) {
	s.mu.Lock()
	delete(s.m, uid)
	s.mu.Unlock()
}

// clear drops all that is kept.
func (s *states) clear() {
	s.mu.Lock()
	clear(s.m)
	s.mu.Unlock()
}
