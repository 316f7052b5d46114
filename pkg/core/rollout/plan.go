package rollout

import (
	"sort"
	"time"
)

// Plan brings r up to date with the workload's pods as the cluster shows
// them and, while r is Running and not paused, plans the next pods without
// taking more than the budget out of service. It returns the pods to emit
// upgrade.planned for: the ones planned now and the ones the same input
// planned before (so a redelivered input re-emits identical plans).
func Plan(r *Rollout, cands []Candidate, inputID string, paused bool, now time.Time) []*Pod {
	reconcile(r, cands)
	if r.Phase == Running && !paused {
		planNext(r, cands, inputID, now)
	}
	r.UpdatedAt = now
	var out []*Pod
	for _, p := range r.Pods {
		if p.State == InFlight && p.PlannedBy == inputID && p.UpgradeID == r.UpgradeID {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// reconcile adds new pods (each taking over the ends carried for its name:
// Ended), notices pods that need nothing anymore, and
// handles pods that left: untouched ones (pending, current) are forgotten,
// those whose upgrade ended move to Gone (they still count), in-flight ones
// stay until their outcome is reported (verify, or the watchdog).
func reconcile(r *Rollout, cands []Candidate) {
	for _, c := range cands {
		p, ok := r.Pods[c.Pod.Name]
		if ok && p.State == InFlight {
			continue
		}
		if ok && p.UID != c.Pod.UID && touched(p) {
			r.leave(p) // replaced after its upgrade ended
		}
		if !ok || p.UID != c.Pod.UID || p.State == Pending {
			n := fromCandidate(c)
			switch {
			case ok:
				n.Ended = endsOf(p)
				if p.UID == c.Pod.UID {
					n.Attempts = p.Attempts // a re-plan is a try of its own
				}
			case r.Carried[c.Pod.Name] != nil:
				n.Ended = r.Carried[c.Pod.Name]
				delete(r.Carried, c.Pod.Name)
			}
			r.Pods[c.Pod.Name] = n
		}
	}
	if len(r.Pods) == len(cands) {
		return // every pod is a candidate's (a workload's pods have distinct names)
	}
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		seen[c.Pod.Name] = true
	}
	for name, p := range r.Pods {
		switch {
		case seen[name] || p.State == InFlight:
		case touched(p):
			r.leave(p)
		default:
			delete(r.Pods, name)
		}
	}
}

// touched: the rollout changed the pod, or tried to.
func touched(p *Pod) bool {
	return p.State != Pending && p.State != Current && p.State != InFlight
}

func fromCandidate(c Candidate) *Pod {
	p := &Pod{Name: c.Pod.Name, UID: c.Pod.UID, Node: c.Pod.Node, Containers: c.Containers, ReadinessGate: c.ReadinessGate}
	if len(c.Containers) == 0 {
		p.State, p.Reason = Current, c.Why
	} else {
		p.State = Pending
	}
	return p
}

// planNext moves pending pods in flight. Pods that are not Ready cost no
// availability and go first; Ready ones go while fewer than Budget pods are
// unavailable (not Ready, or in flight and not freed). Held pods wait for
// their node.
func planNext(r *Rollout, cands []Candidate, inputID string, now time.Time) {
	if !r.anyPending() {
		return
	}
	unavailable := map[string]bool{}
	byName := make(map[string]Candidate, len(cands))
	for _, c := range cands {
		byName[c.Pod.Name] = c
		if !c.Ready {
			unavailable[c.Pod.Name] = true
		}
	}
	var pending []Candidate
	for name, p := range r.Pods {
		switch p.State {
		case InFlight:
			if c, ok := byName[name]; !ok || !freed(r, p, c) {
				unavailable[name] = true
			}
		case Pending:
			pending = append(pending, byName[name])
		}
	}
	sortPending(pending, cands, r.Options.OrderByOrdinal)
	var planned []*Pod
	room := canaryRoom(r) // a canary step's cap; negative: none
	for _, c := range pending {
		if c.Held {
			continue
		}
		if room == 0 {
			break
		}
		if c.Ready {
			if len(unavailable) >= max(r.Options.Budget, 1) {
				continue
			}
			unavailable[c.Pod.Name] = true
		}
		room--
		p := r.edit(c.Pod.Name)
		p.State, p.UpgradeID, p.PlannedBy, p.PlannedAt = InFlight, r.UpgradeID, inputID, now
		p.Attempts, p.Reminded, p.RemindedFor = p.Attempts+1, 0, time.Time{}
		p.Wave = r.Wave + 1 // the wave these pods make
		planned = append(planned, p)
	}
	if len(planned) > 0 {
		r.ProgressAt = now
		r.Wave++
	}
}

// anyPending reports whether a pod waits to be planned.
func (r *Rollout) anyPending() bool {
	for _, p := range r.Pods {
		if p.State == Pending {
			return true
		}
	}
	return false
}

// freed: the cluster shows the in-flight pod Ready with its upgrade done
// and no min-ready time to wait, so its slot is free before its outcome
// is recorded (the outcome still records it).
func freed(r *Rollout, p *Pod, c Candidate) bool {
	return c.Ready && r.Options.MinReadySeconds == 0 && c.Pod.UID == p.UID && c.Done != "" && c.Done == p.UpgradeID
}

// sortPending orders pods: not Ready first; then, for a StatefulSet, the
// highest ordinal first; otherwise spread over the nodes: every node's
// first pod (by name, among all of cands on that node) before any node's
// second, and so on, the node's name breaking ties, so that consecutive
// waves restart pods on different nodes. A kubelet takes an image patch
// up in the sync after its gate's only once a PLEG relist begun after
// that sync has run (its pod worker waits for a pod cache newer than the
// last sync), and a pod it has just made Ready was seen by its relist a
// few ms before: the next pod on that node, gated tens of ms later, waits
// almost a whole relist period (1 s) for its restart to begin, where on
// another node, whose relist keeps its own phase, it waits half of one on
// average. The rank comes from all of cands, so it does not change as
// pods are planned.
func sortPending(ps, cands []Candidate, byOrdinal bool) {
	var rank map[string]int
	if !byOrdinal && len(ps) > 1 {
		rank = nodeRanks(cands)
	}
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Ready != b.Ready {
			return !a.Ready
		}
		if byOrdinal && a.Ordinal != b.Ordinal {
			return a.Ordinal > b.Ordinal
		}
		if ra, rb := rank[a.Pod.Name], rank[b.Pod.Name]; ra != rb {
			return ra < rb
		}
		if a.Pod.Node != b.Pod.Node {
			return a.Pod.Node < b.Pod.Node
		}
		return a.Pod.Name < b.Pod.Name
	})
}

// nodeRanks gives each candidate its place among the candidates on its
// node, by name (0 for the first).
func nodeRanks(cands []Candidate) map[string]int {
	byNode := map[string][]string{}
	for _, c := range cands {
		byNode[c.Pod.Node] = append(byNode[c.Pod.Node], c.Pod.Name)
	}
	rank := make(map[string]int, len(cands))
	for _, names := range byNode {
		sort.Strings(names)
		for i, n := range names {
			rank[n] = i
		}
	}
	return rank
}
