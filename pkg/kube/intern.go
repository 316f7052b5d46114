package kube

import (
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// internLimit bounds each table of an interner: a full table starts over,
// so values of objects long gone are not kept forever, and a cluster with
// more distinct values than this shares less but stays correct.
const internLimit = 4096

// internMax is the longest string an interner shares: longer ones (a
// state annotation, a last-applied configuration) are seldom equal.
const internMax = 128

// interner shares equal values between the objects of one cache: the pods
// of a workload carry the same namespace, labels, owner, image, requests
// and condition types, and decoding gives each its own copy. A value
// shared is read only, as every object of an informer's cache is (a
// writer changes a DeepCopy, which copies maps and slices).
type interner struct {
	mu     sync.Mutex
	strs   map[string]string
	maps   map[string]map[string]string
	lists  map[string]corev1.ResourceList
	owners map[string][]metav1.OwnerReference
	gates  map[string][]corev1.PodReadinessGate
	resize map[string][]corev1.ContainerResizePolicy
}

func newInterner() *interner {
	return &interner{strs: map[string]string{}, maps: map[string]map[string]string{}, lists: map[string]corev1.ResourceList{},
		owners: map[string][]metav1.OwnerReference{}, gates: map[string][]corev1.PodReadinessGate{},
		resize: map[string][]corev1.ContainerResizePolicy{}}
}

// shared is the value kept under key in table, or v, kept from now on.
func shared[V any](mu *sync.Mutex, table map[string]V, key string, v V) V {
	mu.Lock()
	defer mu.Unlock()
	if have, ok := table[key]; ok {
		return have
	}
	if len(table) >= internLimit {
		clear(table)
	}
	table[key] = v
	return v
}

// str is s, or an equal string met before.
func (in *interner) str(s string) string {
	if s == "" || len(s) > internMax {
		return s
	}
	return shared(&in.mu, in.strs, s, s)
}

// typed is str for a string type (a condition type, a phase).
func typed[T ~string](in *interner, s T) T { return T(in.str(string(s))) }

// stringMap is an equal map met before when every value of m is short,
// else m with its keys and short values interned.
func (in *interner) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	var key strings.Builder
	short := true
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		short = short && len(v) <= internMax
		key.WriteString(k)
		key.WriteByte(0)
		key.WriteString(v)
		key.WriteByte(0)
	}
	if short {
		in.mu.Lock()
		have, ok := in.maps[key.String()]
		in.mu.Unlock()
		if ok {
			return have
		}
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[in.str(k)] = in.str(v)
	}
	if !short {
		return out
	}
	return shared(&in.mu, in.maps, key.String(), out)
}

// resources is l, or an equal list (same quantities, written alike) met
// before.
func (in *interner) resources(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l)) {
		q := l[k]
		key.WriteString(string(k))
		key.WriteByte('=')
		key.WriteString(q.String())
		key.WriteByte(0)
	}
	return shared(&in.mu, in.lists, key.String(), l)
}

// owners is refs, or an equal list met before.
func (in *interner) ownerRefs(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if len(refs) == 0 {
		return refs
	}
	var key strings.Builder
	for _, r := range refs {
		key.WriteString(r.APIVersion + "\x00" + r.Kind + "\x00" + r.Name + "\x00" + string(r.UID) + "\x00")
		key.WriteString(flag(r.Controller) + flag(r.BlockOwnerDeletion))
	}
	return shared(&in.mu, in.owners, key.String(), refs)
}

func flag(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "t"
	}
	return "f"
}

// readinessGates is gates, or an equal list met before.
func (in *interner) readinessGates(gates []corev1.PodReadinessGate) []corev1.PodReadinessGate {
	if len(gates) == 0 {
		return gates
	}
	var key strings.Builder
	for _, g := range gates {
		key.WriteString(string(g.ConditionType) + "\x00")
	}
	return shared(&in.mu, in.gates, key.String(), gates)
}

// resizePolicy is p, or an equal list met before.
func (in *interner) resizePolicy(p []corev1.ContainerResizePolicy) []corev1.ContainerResizePolicy {
	if len(p) == 0 {
		return p
	}
	var key strings.Builder
	for _, r := range p {
		key.WriteString(string(r.ResourceName) + "=" + string(r.RestartPolicy) + "\x00")
	}
	return shared(&in.mu, in.resize, key.String(), p)
}
