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
// forgotten at the next observation.
type Memo struct {
	mu sync.Mutex
	by map[string]memoOf
}

// memoOf is one workload's memo: for which rollout and policy, and the
// Candidates by pod UID.
type memoOf struct {
	upgradeID, policy string
	pods              map[types.UID]memoPod
}

type memoPod struct {
	rv string
	c  rollout.Candidate
}

// Candidates is Candidates() for the pods of workload key in the rollout
// upgradeID, reusing what the last observation of the same pods planned.
// The Candidates returned are shared: read only.
func (m *Memo) Candidates(key, upgradeID, kind string, pods []*corev1.Pod, push events.UpgradeRequestData, pol policy.Policy) []rollout.Candidate {
	m.mu.Lock()
	old, ok := m.by[key]
	m.mu.Unlock()
	if !ok || old.upgradeID != upgradeID || old.policy != pol.Raw {
		old = memoOf{}
	}
	next := memoOf{upgradeID: upgradeID, policy: pol.Raw, pods: make(map[types.UID]memoPod, len(pods))}
	var fresh []*corev1.Pod
	for _, pod := range pods {
		if p, ok := old.pods[pod.UID]; ok && p.rv == pod.ResourceVersion && pod.ResourceVersion != "" {
			next.pods[pod.UID] = p
		} else {
			fresh = append(fresh, pod)
		}
	}
	for i, c := range Candidates(kind, fresh, push, pol) {
		next.pods[fresh[i].UID] = memoPod{rv: fresh[i].ResourceVersion, c: c}
	}
	out := make([]rollout.Candidate, 0, len(pods)) // in the pods' order, as Candidates() gives them
	for _, pod := range pods {
		out = append(out, next.pods[pod.UID].c)
	}
	m.mu.Lock()
	if m.by == nil {
		m.by = map[string]memoOf{}
	}
	m.by[key] = next
	m.mu.Unlock()
	return out
}
