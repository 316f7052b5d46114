package kube

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// podOrders keeps, by workload, where each pod's name fell in the last
// list PodsOf sorted, so that the next list of the same names is put in
// order by a lookup per pod instead of a sort: compute-spec lists a
// workload's pods at every outcome of its rollout, and sorting a
// thousand names by comparison was most of that read. The cache's index
// stays the source of what the pods are; only their order is reused.
type podOrders struct {
	mu sync.Mutex
	by map[string]*podOrder
}

// podOrder is one sorted list's positions by pod name.
type podOrder struct {
	at map[string]int
}

// sorted puts pods in name order (in place) and returns them; key names
// the workload.
func (o *podOrders) sorted(key string, pods []*corev1.Pod) []*corev1.Pod {
	o.mu.Lock()
	last := o.by[key]
	o.mu.Unlock()
	if last != nil && len(last.at) == len(pods) {
		out := make([]*corev1.Pod, len(pods))
		if last.place(pods, out) {
			copy(pods, out)
			return pods
		}
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	o.remember(key, pods)
	return pods
}

// place puts each pod at its name's position into out; false when a name
// is not among the positions (pods are not the last list's names).
func (p *podOrder) place(pods, out []*corev1.Pod) bool {
	for _, pod := range pods {
		i, ok := p.at[pod.Name]
		if !ok || out[i] != nil {
			return false
		}
		out[i] = pod
	}
	return true
}

// remember keeps the positions of sorted's names for key; an empty list
// keeps none.
func (o *podOrders) remember(key string, sorted []*corev1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(sorted) == 0 {
		delete(o.by, key)
		return
	}
	at := make(map[string]int, len(sorted))
	for i, p := range sorted {
		at[p.Name] = i
	}
	if o.by == nil {
		o.by = map[string]*podOrder{}
	}
	o.by[key] = &podOrder{at: at}
}
