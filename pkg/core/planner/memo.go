package planner

import (
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
// forgotten at the next observation. A workload's entries are updated in
// place: an observation plans and stores only the pods that changed, and
// gives the same Candidates as Candidates() over all of them.
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
	// gen counts the observations; a pod entry seen by the last one has
	// its number.
	gen  uint64
	pods map[types.UID]*memoPod
}

type memoPod struct {
	rv  string
	gen uint64
	c   rollout.Candidate
}

// Candidates is Candidates() for the pods of workload key in the rollout
// upgradeID, reusing what the last observation of the same pods planned.
// The Candidates returned are shared: read only (the slice is the
// caller's).
func (m *Memo) Candidates(key, upgradeID, kind string, pods []*corev1.Pod, push events.UpgradeRequestData, pol policy.Policy) []rollout.Candidate {
	w := m.of(key)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pods == nil || w.upgradeID != upgradeID || w.policy != pol.Raw {
		w.upgradeID, w.policy, w.pods = upgradeID, pol.Raw, make(map[types.UID]*memoPod, len(pods))
	}
	w.gen++
	out := make([]rollout.Candidate, len(pods)) // in the pods' order, as Candidates() gives them
	var fresh []int
	for i, pod := range pods {
		p, ok := w.pods[pod.UID]
		if !ok || p.rv != pod.ResourceVersion || pod.ResourceVersion == "" {
			fresh = append(fresh, i)
			continue
		}
		p.gen, out[i] = w.gen, p.c
	}
	for _, i := range fresh {
		c := Candidates(kind, pods[i:i+1], push, pol)[0]
		w.pods[pods[i].UID] = &memoPod{rv: pods[i].ResourceVersion, gen: w.gen, c: c}
		out[i] = c
	}
	if len(w.pods) > len(pods) {
		w.forget()
	}
	return out
}

// forget drops the pods the last observation did not see.
func (w *memoOf) forget() {
	for uid, p := range w.pods {
		if p.gen != w.gen {
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
