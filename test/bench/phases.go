package main

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// podStamps are when the stream stored each step of one pod's upgrade
// (Seen: the first pod.updated of the pod Ready on the new image), and
// Ready when the benchmark's own watch first saw it so (zero when not
// watched).
type podStamps struct {
	Planned, Prepulled, Patched, Ready, Seen, Verified time.Time
}

// phase is one part of where an in-place rollout's time went.
type phase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Note    string  `json:"note,omitempty"`
}

// breakdown says where an in-place rollout's time went, from the webhook's
// arrival to rollout.completed: the reaction, each pod's steps (median and
// slowest), how much of the max-unavailable budget sat idle while pods
// were still waiting, and the tail after the last pod (template sync).
func breakdown(webhook, completed time.Time, pods map[string]podStamps, budget int) []phase {
	pods = complete(pods)
	if len(pods) == 0 {
		return nil
	}
	var first, last time.Time
	var prepull, patch, verify, kubelet, project, watcher, decide []time.Duration
	for _, s := range pods {
		first, last = earliest(first, s.Planned), latest(last, s.Verified)
		if !s.Prepulled.IsZero() {
			prepull = append(prepull, s.Prepulled.Sub(s.Planned))
			patch = append(patch, s.Patched.Sub(s.Prepulled))
		} else {
			patch = append(patch, s.Patched.Sub(s.Planned))
		}
		verify = append(verify, s.Verified.Sub(s.Patched))
		if !s.Ready.IsZero() {
			kubelet = append(kubelet, s.Ready.Sub(s.Patched))
			project = append(project, s.Verified.Sub(s.Ready))
			if !s.Seen.IsZero() {
				watcher = append(watcher, s.Seen.Sub(s.Ready))
				decide = append(decide, s.Verified.Sub(s.Seen))
			}
		}
	}
	out := []phase{{Name: "webhook → first pod planned", Seconds: first.Sub(webhook).Seconds()}}
	if len(prepull) > 0 {
		out = append(out, spread("planned → image pre-pulled on its node", prepull))
	}
	out = append(out,
		spread("pre-pulled → patched (gate False, grace, patch)", patch),
		spread("patched → verified (kubelet restart, gate True, Ready)", verify))
	if len(kubelet) == len(verify) {
		// Every pod's Ready was seen: the two sides of the step above.
		out = append(out,
			spread("of which patched → Ready on the new image (kubelet restart, gate True; the benchmark's watch)", kubelet),
			spread("of which Ready → verified (pod.updated, verify's decision, upgrade.succeeded stored)", project))
		if len(watcher) == len(verify) {
			out = append(out,
				spread("of which Ready → its pod.updated stored (the pod watcher)", watcher),
				spread("of which pod.updated stored → verified (verify)", decide))
		}
	}
	out = append(out,
		phase{Name: "pods in flight: first planned → last verified", Seconds: last.Sub(first).Seconds(),
			Note: fmt.Sprintf("%.0f%% of the max-unavailable budget (%d) idle while pods waited", 100*idleShare(pods, budget, first, last), budget)},
		phase{Name: "last verified → rollout.completed (template sync)", Seconds: completed.Sub(last).Seconds()},
	)
	return out
}

// complete keeps the pods that went through every step (one that failed
// or was deleted says nothing of them).
func complete(pods map[string]podStamps) map[string]podStamps {
	out := map[string]podStamps{}
	for k, s := range pods {
		if !s.Planned.IsZero() && !s.Patched.IsZero() && !s.Verified.IsZero() {
			out[k] = s
		}
	}
	return out
}

// spread is a per-pod phase: its median, the slowest in the note.
func spread(name string, ds []time.Duration) phase {
	slices.Sort(ds)
	return phase{Name: name + ", median per pod", Seconds: ds[len(ds)/2].Seconds(),
		Note: fmt.Sprintf("slowest %.2fs", ds[len(ds)-1].Seconds())}
}

// idleShare is the part of the budget's slot-time in [from, to] not used
// while pods were still to be upgraded: at each moment min(budget, pods
// not yet verified) slots could be busy, and the pods planned and not yet
// verified are.
func idleShare(pods map[string]podStamps, budget int, from, to time.Time) float64 {
	type edge struct {
		at     time.Time
		flight int // +1 planned, -1 verified
	}
	var edges []edge
	for _, s := range pods {
		edges = append(edges, edge{s.Planned, 1}, edge{s.Verified, -1})
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].at.Before(edges[j].at) })
	span := to.Sub(from).Seconds() * float64(budget)
	if span <= 0 {
		return 0
	}
	remaining, inFlight, idle := len(pods), 0, 0.0
	prev := from
	for _, e := range edges {
		usable := min(budget, remaining)
		idle += float64(max(usable-inFlight, 0)) * e.at.Sub(prev).Seconds()
		inFlight += e.flight
		if e.flight < 0 {
			remaining--
		}
		prev = e.at
	}
	return idle / span
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
