package main

import (
	"maps"
	"slices"
)

// tally is what each actor asked of the API server during one run.
type tally struct {
	// Writes are the mutating requests by actor, Failed those of them the
	// API server refused (4xx/5xx: conflicts, failed preconditions).
	Writes, Failed map[string]int
	// Requests are every request by actor, reads and watches included.
	Requests map[string]int
	// Detail counts each actor's requests by "verb resource[/subresource]".
	Detail map[string]map[string]int
}

// tallyOf counts reqs made in the given namespaces (nil: anywhere,
// cluster-scoped objects included). The benchmark's own requests are left
// out.
func tallyOf(reqs []request, namespaces map[string]bool) tally {
	t := tally{Writes: map[string]int{}, Failed: map[string]int{}, Requests: map[string]int{}, Detail: map[string]map[string]int{}}
	for _, r := range reqs {
		if namespaces != nil && !namespaces[r.Namespace] {
			continue
		}
		a := actorOf(r)
		if a == actorBench {
			continue
		}
		t.Requests[a]++
		key := r.Verb + " " + r.Resource
		if r.Subresource != "" {
			key += "/" + r.Subresource
		}
		if t.Detail[a] == nil {
			t.Detail[a] = map[string]int{}
		}
		t.Detail[a][key]++
		if !isWrite(r.Verb) {
			continue
		}
		t.Writes[a]++
		if r.Code >= 400 {
			t.Failed[a]++
		}
	}
	return t
}

// perPod divides each count by pods.
func perPod(m map[string]int, pods int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = float64(v) / float64(max(pods, 1))
	}
	return out
}

// total sums a map's values.
func total(m map[string]int) int {
	n := 0
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n += m[k]
	}
	return n
}

// scope is a run's namespace and the project's own (where pre-pull pods
// run: inplace-system by default, inplace-prepull in config/).
func scope(ns string) map[string]bool {
	return map[string]bool{ns: true, "inplace-system": true, "inplace-prepull": true}
}
