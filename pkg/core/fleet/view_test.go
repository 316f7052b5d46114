package fleet

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

func TestSummarize(t *testing.T) {
	r := record(policy(), []string{"staging"}, map[string]State{"staging": Halted})
	u := events.DeriveUpgradeID("push-1", webRef)
	want := Status{Push: "push-1", Target: "reg/app:2", StartedAt: t0,
		Halt: &Halt{Stage: "staging", Cluster: "staging", Workload: web, Reason: "RolloutHalted", Message: web + " in staging: r ", At: t0},
		Stages: []StageReport{
			{Name: "staging", State: HaltedHere, ReleasedAt: t0, Clusters: []ClusterReport{
				{Cluster: "staging", SentAt: t0, Rollouts: []RolloutReport{{Workload: web, UpgradeID: u, State: Halted, Reason: "r"}}}}},
			{Name: "prod", State: Stopped, Clusters: []ClusterReport{
				{Cluster: "prod-eu", Rollouts: []RolloutReport{{Workload: web, UpgradeID: u}}},
				{Cluster: "prod-us", Rollouts: []RolloutReport{{Workload: web, UpgradeID: u}}}}},
		}}
	if diff := cmp.Diff(want, Summarize(r)); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}
