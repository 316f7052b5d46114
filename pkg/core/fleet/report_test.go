package fleet

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

var webRef = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}

func report(cluster, id, typ string, at time.Time) Report {
	return Report{Cluster: cluster, Event: id, Type: typ, At: at, Rollout: events.RolloutData{
		UpgradeID: events.DeriveUpgradeID("push-1", webRef), Workload: webRef, Target: "reg/app:2"}}
}

func TestApply(t *testing.T) {
	t1 := t0.Add(time.Minute)
	halted := func() *Record {
		r := record(policy(), []string{"staging"}, nil)
		r.Members = map[string]Member{"staging": {Rollouts: map[string]Outcome{
			web: {State: Halted, Event: "h-1", At: t1, ReceivedAt: t1}}}}
		return r
	}
	failedCounts := report("staging", "c-2", events.RolloutCompleted, t1)
	failedCounts.Rollout.Counts.RolledBack = 1
	otherPush := report("staging", "c-1", events.RolloutCompleted, t1)
	otherPush.Rollout.UpgradeID = events.DeriveUpgradeID("push-2", webRef)
	otherWorkload := report("staging", "c-1", events.RolloutCompleted, t1)
	otherWorkload.Rollout.Workload.Name = "api"
	otherWorkload.Rollout.UpgradeID = events.DeriveUpgradeID("push-1", otherWorkload.Rollout.Workload)
	withUID := report("staging", "c-3", events.RolloutCompleted, t1.Add(time.Second))
	withUID.Rollout.Workload.UID = "uid-1"

	for _, tc := range []struct {
		name    string
		r       *Record
		rep     Report
		changed bool
		err     error
		want    State
	}{
		{"completed", record(policy(), []string{"staging"}, nil), report("staging", "c-1", events.RolloutCompleted, t1), true, nil, Succeeded},
		{"the workload's uid is not part of the id", record(policy(), []string{"staging"}, nil), withUID, true, nil, Succeeded},
		{"completed with a rollback is failed", record(policy(), []string{"staging"}, nil), failedCounts, true, nil, Failed},
		{"halted", record(policy(), []string{"staging"}, nil), report("staging", "h-1", events.RolloutHalted, t1), true, nil, Halted},
		{"a newer completion after a halt", halted(), report("staging", "c-2", events.RolloutCompleted, t1.Add(time.Second)), true, nil, Succeeded},
		{"a duplicate changes nothing", halted(), report("staging", "h-1", events.RolloutHalted, t1), false, nil, Halted},
		{"an older report changes nothing", halted(), report("staging", "c-0", events.RolloutCompleted, t0), false, nil, Halted},
		{"a cluster in no stage", record(policy(), []string{"staging"}, nil), report("elsewhere", "c-1", events.RolloutCompleted, t1), false, ErrRefused, ""},
		{"a stage not released", record(policy(), []string{"staging"}, nil), report("prod-eu", "c-1", events.RolloutCompleted, t1), false, ErrRefused, ""},
		{"another push", record(policy(), []string{"staging"}, nil), otherPush, false, ErrNotThisPush, ""},
		{"a workload not in the policy", record(policy(), []string{"staging"}, nil), otherWorkload, false, ErrRefused, ""},
		{"another type", record(policy(), []string{"staging"}, nil), report("staging", "c-1", events.UpgradeSucceeded, t1), false, ErrRefused, ""},
		{"no event id", record(policy(), []string{"staging"}, nil), report("staging", "", events.RolloutCompleted, t1), false, ErrRefused, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, err := Apply(tc.r, tc.rep, t1)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("Apply: %v, want %v", err, tc.err)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.want, tc.r.Members[tc.rep.Cluster].Rollouts[web].State); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyStaysInItsCluster: a report changes only the cluster it came
// from, whatever the body says.
func TestApplyStaysInItsCluster(t *testing.T) {
	r := record(policy(), []string{"staging", "prod"}, nil)
	if _, err := Apply(r, report("prod-eu", "h-1", events.RolloutHalted, t0), t0); err != nil {
		t.Fatal(err)
	}
	if got := len(r.Members); got != 1 || r.Members["prod-eu"].Rollouts[web].State != Halted {
		t.Errorf("members = %+v; want only prod-eu halted", r.Members)
	}
}

// TestApplyKeepsTheAnalysisVerdict: the member's own canary analysis
// verdict is kept with its outcome, so a stage that asks for an analysis
// can be decided from the reports.
func TestApplyKeepsTheAnalysisVerdict(t *testing.T) {
	r := record(policy(), []string{"staging"}, nil)
	rep := report("staging", "c-1", events.RolloutCompleted, t0)
	rep.Rollout.Analysis = events.AnalysisPassed
	if _, err := Apply(r, rep, t0); err != nil {
		t.Fatal(err)
	}
	if got := r.Members["staging"].Rollouts[web].Analysis; got != Pass {
		t.Errorf("analysis = %q, want %q", got, Pass)
	}
}
