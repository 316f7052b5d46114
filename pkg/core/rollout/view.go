package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
)

// View is one revision of a record read one pod at a time: its top level
// decoded, each pod's entry decoded when asked for and kept. A reader
// that checks one pod (the guards) or only the pods still pending (the
// warm pre-pull) then pays for a walk of the record's bytes and the pods
// it reads, instead of a decode of every pod at every revision. For a
// record that is valid JSON it reads exactly what a decode of the whole
// record does; of one that is not, only what is read is checked.
//
// A View is shared by the readers of its revision: neither it nor what it
// returns may be modified.
type View struct {
	top *Rollout // every field but Pods

	mu   sync.Mutex
	raw  map[string][]byte // each pod's entry, by name; nil: from a decoded record
	pods map[string]*Pod   // those decoded
}

// NewView indexes raw (a whole record) for reading. prev, when set, is a
// view of an earlier revision of the same key: a pod whose entry has the
// same bytes in both is not decoded again.
func NewView(raw []byte, prev *View) (*View, error) {
	top, entries, err := index(raw)
	if err != nil {
		var r Rollout
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		return ViewOf(&r), nil
	}
	var r Rollout
	if err := json.Unmarshal(top, &r); err != nil {
		return nil, err
	}
	v := &View{top: &r, raw: entries, pods: map[string]*Pod{}}
	if prev != nil && prev.raw != nil {
		prev.mu.Lock()
		for name, p := range prev.pods {
			if b, ok := entries[name]; ok && bytes.Equal(b, prev.raw[name]) {
				v.pods[name] = p
			}
		}
		prev.mu.Unlock()
	}
	return v, nil
}

// ViewOf is a view of a decoded record (shared read-only from now on).
func ViewOf(r *Rollout) *View {
	top := *r
	top.Pods = nil
	return &View{top: &top, pods: r.Pods}
}

// Record is the record's top level: every field but Pods, which is nil
// (Pod and Pods read them).
func (v *View) Record() *Rollout { return v.top }

// Pod is the pod name of the record, or nil when it has none; an error
// when its entry is not a pod.
func (v *View) Pod(name string) (*Pod, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.pod(name)
}

func (v *View) pod(name string) (*Pod, error) {
	if p, ok := v.pods[name]; ok || v.raw == nil {
		return p, nil
	}
	b, ok := v.raw[name]
	if !ok {
		return nil, nil
	}
	var p *Pod
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("pod %s: %w", name, err)
	}
	v.pods[name] = p
	return p, nil
}

// Pods are the record's pods by name (sorted), each decoded as it is
// reached; a pod whose entry is not one ends them with its error.
func (v *View) Pods() iter.Seq2[*Pod, error] {
	return func(yield func(*Pod, error) bool) {
		for _, name := range v.names() {
			p, err := v.Pod(name)
			if (p != nil || err != nil) && !yield(p, err) || err != nil {
				return
			}
		}
	}
}

func (v *View) names() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.raw != nil {
		return slices.Sorted(maps.Keys(v.raw))
	}
	return slices.Sorted(maps.Keys(v.pods))
}
