package main

import (
	"fmt"
	"slices"
)

// defaultsTarget judges in place against the native rolling update at
// its defaults (25% unavailable, 25% surge).
func (r *report) defaultsTarget(sc scenario) target {
	t := target{Name: sc.Title + ": in place vs the native rolling update (its defaults)",
		Want: fmt.Sprintf("≤ %.2fx", sc.TargetDefaults), Got: "not measured"}
	ip, def := r.find(sc.Name, inPlace), r.find(sc.Name, nativeDefaults)
	if ip == nil || def == nil {
		return t
	}
	ratio := ip.Seconds / def.Seconds
	t.Got, t.Met = fmt.Sprintf("%.2fx (%.1fs / %.1fs)", ratio, ip.Seconds, def.Seconds), ptr(ratio <= sc.TargetDefaults)
	if !*t.Met {
		t.Where = r.belowFloor(sc, def, sc.TargetDefaults) + whereTime(ip.Phases) + r.sharesOf(ip)
	}
	return t
}

// trafficTarget: no request to the Service fails during an in-place
// rollout; the other runs' counts beside it.
func (r *report) trafficTarget(sc scenario) target {
	t := target{Name: sc.Title + ": failed requests to the Service, in place", Want: "0", Got: "not measured"}
	ip := r.find(sc.Name, inPlace)
	if ip == nil || ip.Traffic == nil {
		return t
	}
	t.Got, t.Met = "in place "+ip.Traffic.String(), ptr(ip.Traffic.Failed == 0)
	for _, k := range sc.kinds()[1:] {
		if x := r.find(sc.Name, k); x != nil && x.Traffic != nil {
			t.Got += "; " + string(k) + " " + x.Traffic.String()
		}
	}
	return t
}

// realLast orders the scenarios and rollouts with the real-node ones after
// the simulated ones, whichever part ran first.
func (r *report) realLast() {
	real := map[string]bool{}
	for _, sc := range r.Scenarios {
		real[sc.Name] = sc.Nodes == realNodes
	}
	rank := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(r.Scenarios, func(a, b scenario) int { return rank(a.Nodes == realNodes) - rank(b.Nodes == realNodes) })
	slices.SortStableFunc(r.Rollouts, func(a, b rollout) int { return rank(real[a.Scenario]) - rank(real[b.Scenario]) })
}
