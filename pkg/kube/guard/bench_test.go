package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// revisions is a rollout record as the KV serves it: one value, one
// revision.
type revisions struct {
	raw []byte
	rev uint64
}

func (r *revisions) Get(context.Context, string) ([]byte, uint64, error) { return r.raw, r.rev, nil }

type owners struct{ w kube.Workload }

func (o owners) Owner(context.Context, *corev1.Pod) (kube.Workload, bool, error) {
	return o.w, true, nil
}

// bigRecord is record() with n pods in flight.
func bigRecord(n int) *rollout.Rollout {
	r := record()
	for i := range n {
		name := fmt.Sprintf("web-%d", i+2)
		r.Pods[name] = &rollout.Pod{Name: name, UID: "uid-" + name, Node: "node-1", State: rollout.InFlight,
			UpgradeID: "u-1", PlannedBy: "e-" + name, Containers: []events.ContainerPlan{{Name: "app", FromImage: from, ToImage: to}}}
	}
	return r
}

// BenchmarkGuardPerPod is the guards' cost of one pod's step of a rollout
// of n pods: the record gets a new revision (the pod's outcome) and is
// read by the deliveries around it (patch-pod's plan check, verify's state
// checks: reads per revision). Each read decodes the whole record unless
// the process shares its decodes by revision (rollout.Decoded), so the
// per-step cost is O(n) either way, reads times over without the sharing.
func BenchmarkGuardPerPod(b *testing.B) {
	const reads = 3
	for _, n := range []int{100, 1000} {
		raw, err := json.Marshal(bigRecord(n))
		if err != nil {
			b.Fatal(err)
		}
		for _, shared := range []bool{false, true} {
			b.Run(fmt.Sprintf("pods=%d/shared=%t", n, shared), func(b *testing.B) {
				recs := &revisions{raw: raw}
				g := &Guard{Owners: owners{workload("semver:minor")}, Records: recs}
				if shared {
					g.Decoded = &rollout.Decoded{}
				}
				p, pl := pod(), plan()
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					recs.rev++
					for range reads {
						if err := g.Plan(b.Context(), p, pl); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
