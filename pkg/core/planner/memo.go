package planner

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Memo keeps, by workload, each live pod's candidate for the rollout
// being observed, by the pod's resourceVersion: every outcome of a
// rollout observes all of its pods again, and planning each one (parse
// its images, decide the policy) made a rollout of n pods O(n²) plans. A
// pod whose object changed (a new resourceVersion), a new rollout or a
// changed policy is planned again; pods gone from the workload are
// forgotten at the next observation. An observation gives the same
// Candidates as Candidates() over all of its pods, and plans and looks up
// only the pods that are not the objects the last one saw at the same
// place.
type Memo struct {
	mu sync.Mutex
	by map[string]*memoOf
}

// memoOf is one workload's memo: for which rollout and policy, and the
// Candidates by pod UID. mu holds one observation of the workload at a
// time.
type memoOf struct {
	mu                sync.Mutex
	upgradeID, policy string
	pods              map[types.UID]*memoPod
	// seen, rvs and cands are the last observation's pods in its order,
	// their resourceVersions and their Candidates (shared with that
	// observation's caller: never modified).
	seen  []*corev1.Pod
	rvs   []string
	cands []rollout.Candidate
}

type memoPod struct {
	rv string
	c  rollout.Candidate
}

// Candidates is Candidates() for the pods of workload key in the rollout
// upgradeID, reusing what the last observation of the same pods planned.
// The result is shared, slice and Candidates: read only. It is the last
// observation's own slice when no pod changed, and a copy of it with the
// changed pods' Candidates otherwise (copy on write).
func (m *Memo) Candidates(key, upgradeID, kind string, pods []*corev1.Pod, push events.UpgradeRequestData, pol policy.Policy) []rollout.Candidate {
	w := m.of(key)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pods == nil || w.upgradeID != upgradeID || w.policy != pol.Raw {
		w.upgradeID, w.policy, w.pods = upgradeID, pol.Raw, make(map[types.UID]*memoPod, len(pods))
		w.seen, w.rvs, w.cands = nil, nil, nil
	}
	same := len(pods) == len(w.seen) && w.cands != nil
	var out []rollout.Candidate // nil while every pod is the one seen at its place
	for i, pod := range pods {
		if same && w.seen[i] == pod && w.rvs[i] == pod.ResourceVersion && pod.ResourceVersion != "" {
			continue
		}
		if out == nil {
			out = make([]rollout.Candidate, len(pods))
			if same {
				copy(out, w.cands)
			}
		}
		out[i] = w.candidate(kind, pod, push, pol)
		if same { // seen and rvs are the memo's own: changed in place
			w.seen[i], w.rvs[i] = pod, pod.ResourceVersion
		}
	}
	if out == nil && same {
		return w.cands
	}
	if out == nil {
		out = make([]rollout.Candidate, 0) // no pods
	}
	w.cands = out
	if !same {
		w.seen, w.rvs = slices.Clone(pods), make([]string, len(pods))
		for i, pod := range pods {
			w.rvs[i] = pod.ResourceVersion
		}
	}
	if len(w.pods) > len(pods) {
		w.forget(pods)
	}
	return out
}

// candidate is pod's Candidate: the memo's while its resourceVersion is
// the one planned, planned and kept otherwise.
func (w *memoOf) candidate(kind string, pod *corev1.Pod, push events.UpgradeRequestData, pol policy.Policy) rollout.Candidate {
	if p, ok := w.pods[pod.UID]; ok && p.rv == pod.ResourceVersion && pod.ResourceVersion != "" {
		return p.c
	}
	c := Candidates(kind, []*corev1.Pod{pod}, push, pol)[0]
	w.pods[pod.UID] = &memoPod{rv: pod.ResourceVersion, c: c}
	return c
}

// forget drops the pods that are not among pods.
func (w *memoOf) forget(pods []*corev1.Pod) {
	live := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		live[p.UID] = true
	}
	for uid := range w.pods {
		if !live[uid] {
			delete(w.pods, uid)
		}
	}
}

// of is key's memo, made when it has none.
func (m *Memo) of(key string) *memoOf {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.by == nil {
		m.by = map[string]*memoOf{}
	}
	w := m.by[key]
	if w == nil {
		w = &memoOf{}
		m.by[key] = w
	}
	return w
}
