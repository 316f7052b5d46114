package rollout

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"sync"
)

// Encoder encodes records byte for byte as json.Marshal does, reusing
// the bytes of each pod entry it encoded for the same key while the pod
// is unchanged. A record holds every pod of its rollout and a write
// changes a few of them: encoding it whole made every write O(pods) of
// JSON encoding. A pod entry is never changed once in a record (Clone,
// edit), so the entry encoded last time is the pod it was then: the same
// pointer is the same pod, and another pointer (a changed pod, or a
// record decoded again) is compared field by field (samePod). The zero
// value is ready; a nil *Encoder encodes everything each time.
type Encoder struct {
	mu   sync.Mutex
	keys map[string]*encodedPods
}

// encodedPod is one entry of a record's pods as last encoded: the pod
// (never changed since: a changed pod is another entry) and its
// `"name":{...}` bytes.
type encodedPod struct {
	was  *Pod
	raw  []byte
	seen bool
}

// podsNull is the record's pods field as encoded without pods; the fields
// before it (ids, workload, push, phase, options) hold no "pods" key, so
// its first occurrence is the record's own.
var podsNull = []byte(`"pods":null,"wave":`)

// Encode is json.Marshal(r), reusing key's pod entries that did not change
// since the last Encode of key.
func (e *Encoder) Encode(key string, r *Rollout) ([]byte, error) {
	if e == nil || r == nil || r.Pods == nil {
		return json.Marshal(r)
	}
	shell := *r
	shell.Pods = nil
	head, err := json.Marshal(&shell)
	if err != nil {
		return nil, err
	}
	at := bytes.Index(head, podsNull)
	if at < 0 {
		return json.Marshal(r)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := e.of(key, r)
	names := kept.sorted(r.Pods)
	pods := len(`"pods":`)
	// The last encoding's length is this one's but for what changed.
	out := make([]byte, 0, max(kept.size, len(head))+len(head)/4)
	out = append(out, head[:at+pods]...)
	out = append(out, '{')
	for i, name := range names {
		raw, err := kept.entry(name, r.Pods[name])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	kept.sweep()
	out = append(out, '}')
	out = append(out, head[at+pods+len("null"):]...)
	kept.size = len(out)
	return out, nil
}

// encodedPods are one key's pod entries by name, and the names of the
// pods last encoded in JSON's order (sorted).
type encodedPods struct {
	names []string
	by    map[string]*encodedPod
	size  int // the length of the last encoding
}

// of is key's entries; a finished rollout keeps none (its record is
// rarely written again).
func (e *Encoder) of(key string, r *Rollout) *encodedPods {
	if e.keys == nil {
		e.keys = map[string]*encodedPods{}
	}
	if r.Phase.Finished() {
		delete(e.keys, key)
		return &encodedPods{by: map[string]*encodedPod{}}
	}
	kept := e.keys[key]
	if kept == nil {
		kept = &encodedPods{by: map[string]*encodedPod{}}
		e.keys[key] = kept
	}
	return kept
}

// sorted is the names of pods in JSON's order: the last encoding's when
// pods has the same names.
func (k *encodedPods) sorted(pods map[string]*Pod) []string {
	same := len(k.names) == len(pods)
	for i := 0; same && i < len(k.names); i++ {
		_, same = pods[k.names[i]]
	}
	if !same {
		k.names = slices.Sorted(maps.Keys(pods))
	}
	return k.names
}

// entry is `"name":` and p encoded, from the last encoding when p has not
// changed since.
func (k *encodedPods) entry(name string, p *Pod) ([]byte, error) {
	if c := k.by[name]; c != nil && p != nil && (c.was == p || samePod(c.was, p)) {
		c.was, c.seen = p, true
		return c.raw, nil
	}
	n, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	v, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	raw := append(append(n, ':'), v...)
	if p != nil {
		k.by[name] = &encodedPod{was: p, raw: raw, seen: true}
	}
	return raw, nil
}

// samePod reports whether a and b encode alike: every field equal (a
// time with ==, so with its location and monotonic reading; a container's
// plan with ==, so its resources by their address: a copy's differ, and
// the pod is encoded again). TestSamePodComparesEveryField fails when a
// field added to Pod is not compared here.
func samePod(a, b *Pod) bool {
	return a.Name == b.Name && a.UID == b.UID && a.Node == b.Node && a.State == b.State &&
		a.UpgradeID == b.UpgradeID && a.Wave == b.Wave && a.PlannedAt == b.PlannedAt && a.PlannedBy == b.PlannedBy &&
		(a.Containers == nil) == (b.Containers == nil) && slices.Equal(a.Containers, b.Containers) &&
		a.ReadinessGate == b.ReadinessGate && a.Reason == b.Reason && a.PatchedAt == b.PatchedAt &&
		a.Attempts == b.Attempts && a.Reminded == b.Reminded && a.RemindedFor == b.RemindedFor &&
		(a.Ended == nil) == (b.Ended == nil) && slices.Equal(a.Ended, b.Ended)
}

// sweep forgets the entries of pods the last encoding did not have.
func (k *encodedPods) sweep() {
	for name, c := range k.by {
		if !c.seen {
			delete(k.by, name)
		}
		c.seen = false
	}
}
