package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// shares attributes a rollout's time to its actors: each stretch between
// two moments goes to the actor of the later one, the one that was being
// waited for (a pod's Ready False seen in the API after the gate's write
// is the kubelet's time; its endpoint leaving the slice after that, the
// EndpointSlice controller's; the image patch after that, the project's).
// Moments the API shows ("api": the gate, a pod's deletion) carry the time
// of whoever wrote them, found in the audit log beside them, and are left
// out.
func shares(ms []moment) map[string]time.Duration {
	out := map[string]time.Duration{}
	var last time.Time
	for _, m := range ms {
		if m.Actor == "api" {
			continue
		}
		if !last.IsZero() && m.At.After(last) {
			out[m.Actor] += m.At.Sub(last)
		}
		if m.At.After(last) {
			last = m.At
		}
	}
	return out
}

// sharesText says shares in seconds, largest first.
func sharesText(s map[string]time.Duration) string {
	keys := sortedKeys(s)
	sort.SliceStable(keys, func(i, j int) bool { return s[keys[i]] > s[keys[j]] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f s", k, s[k].Seconds()))
	}
	return strings.Join(parts, ", ")
}

// onePod is the moments of the rollout's second pod to move (the first
// pays the rollout's start), from the first write to it until the next
// pod's first write, with what the kubelet said of it, and those of the
// pods a native rollout created in that time (its replacement: a pod
// whose first moment is the watch seeing it exist).
func onePod(ms []moment) []moment {
	var order []string
	first, created := map[string]time.Time{}, map[string]bool{}
	for _, m := range ms {
		if _, ok := first[m.Pod]; ok || m.Actor == actorKubelet || m.Actor == actorEndpoints {
			continue
		}
		if m.Actor == "api" && m.What != "pod exists" {
			continue
		}
		first[m.Pod] = m.At
		if created[m.Pod] = m.What == "pod exists"; !created[m.Pod] {
			order = append(order, m.Pod)
		}
	}
	if len(order) < 2 {
		return nil
	}
	pod, from := order[1], first[order[1]]
	to := ms[len(ms)-1].At
	if len(order) > 2 {
		to = first[order[2]]
	}
	var out []moment
	for _, m := range ms {
		if m.At.Before(from) || m.At.After(to) {
			continue
		}
		if m.Pod == pod || created[m.Pod] && !first[m.Pod].Before(from) && !first[m.Pod].After(to) {
			out = append(out, m)
		}
	}
	return out
}

// timelineText prints moments one a line, with the time since the first
// and since the one before.
func timelineText(ms []moment) []string {
	var out []string
	for i, m := range ms {
		d := time.Duration(0)
		if i > 0 {
			d = m.At.Sub(ms[i-1].At)
		}
		out = append(out, fmt.Sprintf("%+7.3f s (%+.3f) %-11s %s: %s", m.At.Sub(ms[0].At).Seconds(), d.Seconds(), m.Actor, m.Pod, m.What))
	}
	return out
}
