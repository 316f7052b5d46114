package inplace

import (
	"encoding/json"
	"sync"
)

// stateMemo keeps the States parsed from annotation values, keyed by the
// value itself, so that a pod's state is decoded once however many times
// the watcher, verify and patch-pod read it. The key is the whole JSON, so
// an entry can never be stale: another value is another key. Callers get
// a deep copy (State.clone) and may change it freely; the memo's own copy
// is never handed out. Only valid states are kept (an error names the pod).
//
// It holds two generations of at most memoSize entries: when the current
// one is full it becomes the previous one and the one before is dropped,
// so memory stays bounded and the states read lately stay.
type stateMemo struct {
	mu        sync.Mutex
	cur, prev map[string]*State
}

// memoSize bounds each generation: a few states per pod in flight of a
// 1,000-pod rollout.
const memoSize = 4096

var states stateMemo

// parse returns a copy of the State raw encodes; ok is false when raw is
// not valid JSON of a State (err: json's error) or lacks upgradeID or phase.
func (m *stateMemo) parse(raw string) (st *State, ok bool, err error) {
	m.mu.Lock()
	s, hit := m.cur[raw]
	if !hit {
		if s, hit = m.prev[raw]; hit {
			m.putLocked(raw, s)
		}
	}
	m.mu.Unlock()
	if hit {
		return s.clone(), true, nil
	}
	var fresh State
	if err := json.Unmarshal([]byte(raw), &fresh); err != nil {
		return nil, false, err
	}
	if fresh.UpgradeID == "" || fresh.Phase == "" {
		return nil, false, nil
	}
	m.mu.Lock()
	m.putLocked(raw, &fresh)
	m.mu.Unlock()
	return fresh.clone(), true, nil
}

func (m *stateMemo) putLocked(raw string, s *State) {
	if len(m.cur) >= memoSize {
		m.prev, m.cur = m.cur, nil
	}
	if m.cur == nil {
		m.cur = make(map[string]*State, memoSize)
	}
	m.cur[raw] = s
}

// clone is a deep copy of s: no slice, map or pointer shared with s.
func (s *State) clone() *State {
	c := *s
	if s.Containers != nil {
		c.Containers = make([]ContainerState, len(s.Containers))
		for i, cs := range s.Containers {
			if cs.Resources != nil {
				r := *cs.Resources
				r.From = *cs.Resources.From.DeepCopy()
				r.To = *cs.Resources.To.DeepCopy()
				cs.Resources = &r
			}
			c.Containers[i] = cs
		}
	}
	if s.Restart != nil {
		r := *s.Restart
		c.Restart = &r
	}
	if s.Resize != nil {
		r := *s.Resize
		c.Resize = &r
	}
	if s.Replaced != nil {
		r := *s.Replaced
		c.Replaced = &r
	}
	return &c
}
