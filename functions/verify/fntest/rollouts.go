package fntest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
)

// MemRecords are rollout records in memory, read by the guard of the
// functions under test as the KV bucket would be.
type MemRecords struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Records are the rollout records of this test binary: Plan records every
// plan it makes in them, as compute-spec would, so patch-pod and verify
// built with Guard(client) confirm those plans and refuse others.
var Records = &MemRecords{m: map[string][]byte{}}

// Get implements guard.Records.
func (r *MemRecords) Get(_ context.Context, key string) ([]byte, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	if !ok {
		return nil, 0, nil
	}
	return append([]byte(nil), v...), 1, nil
}

// Put stores a rollout record.
func (r *MemRecords) Put(t testing.TB, ro *rollout.Rollout) {
	t.Helper()
	b, err := json.Marshal(ro)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[rollout.Key(ro.Workload)] = b
}

// Rollout returns the record of a workload, nil when there is none.
func (r *MemRecords) Rollout(t testing.TB, owner events.ObjectRef) *rollout.Rollout {
	t.Helper()
	raw, _, _ := r.Get(t.Context(), rollout.Key(owner))
	if raw == nil {
		return nil
	}
	var ro rollout.Rollout
	if err := json.Unmarshal(raw, &ro); err != nil {
		t.Fatal(err)
	}
	return &ro
}

// Record puts plan in flight in its owner's rollout record, as
// compute-spec does when it plans a pod: the rollout of push, with the
// pod's containers recorded (their previous images among them).
func Record(t testing.TB, plan events.Plan, push events.ImagePushedData) {
	t.Helper()
	ro := Records.Rollout(t, plan.Owner)
	if ro == nil || ro.UpgradeID != plan.UpgradeID {
		ro = &rollout.Rollout{UpgradeID: plan.UpgradeID, Workload: plan.Owner, Push: events.UpgradeRequestData{ImagePushedData: push}, Phase: rollout.Running,
			Pods: map[string]*rollout.Pod{}, StartedAt: time.Now().UTC()}
	}
	ro.Pods[plan.Pod.Name] = &rollout.Pod{Name: plan.Pod.Name, UID: plan.Pod.UID, Node: plan.Pod.Node,
		State: rollout.InFlight, UpgradeID: plan.UpgradeID, Wave: plan.Wave, PlannedBy: "test",
		Containers: plan.Containers, ReadinessGate: plan.ReadinessGate}
	Records.Put(t, ro)
}

// Guard is the guard of a function under test: the pod's owners read
// through client (so through the function's RBAC), records from Records.
func Guard(client kubernetes.Interface) *guard.Guard {
	return &guard.Guard{Client: client, Records: Records}
}
