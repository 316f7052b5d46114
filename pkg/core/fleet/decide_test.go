package fleet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

const web = "Deployment/shop/web"

func policy() Policy {
	return Policy{Workloads: []string{web}, Stages: []Stage{
		{Name: "staging", Clusters: []string{"staging"}},
		{Name: "prod", Clusters: []string{"prod-eu", "prod-us"}},
	}}
}

// record is a push under p with the stages released and the clusters'
// outcomes of web given.
func record(p Policy, released []string, outcomes map[string]State) *Record {
	r := NewRecord("push-1", "reg/app:2", nil, p, t0)
	r.Released = map[string]time.Time{}
	r.Sent = map[string]time.Time{}
	for _, s := range released {
		r.Released[s] = t0
		for _, c := range p.Stages[p.stage(s)].Clusters {
			r.Sent[c] = t0
		}
	}
	for c, s := range outcomes {
		if r.Members == nil {
			r.Members = map[string]Member{}
		}
		r.Members[c] = Member{Rollouts: map[string]Outcome{web: {State: s, Reason: "r", ReceivedAt: t0}}}
	}
	return r
}

func TestDecide(t *testing.T) {
	gated := policy()
	gated.Stages[1].Approval, gated.Stages[1].Analysis = true, true
	approved := record(gated, []string{"staging"}, map[string]State{"staging": Succeeded})
	approved.Approved = map[string]Gate{"prod": {Verdict: Pass}}
	analysed := record(gated, []string{"staging", "prod"},
		map[string]State{"staging": Succeeded, "prod-eu": Succeeded, "prod-us": Succeeded})
	passed := *analysed
	passed.Analysis = map[string]Gate{"prod": {Verdict: Pass}}
	failed := *analysed
	reported := record(gated, []string{"staging", "prod"},
		map[string]State{"staging": Succeeded, "prod-eu": Succeeded, "prod-us": Succeeded})
	for _, c := range []string{"prod-eu", "prod-us"} {
		o := reported.Members[c].Rollouts[web]
		o.Analysis = Pass
		reported.Members[c].Rollouts[web] = o
	}
	halfReported := record(gated, []string{"staging", "prod"}, map[string]State{"staging": Succeeded, "prod-eu": Succeeded})
	o := halfReported.Members["prod-eu"].Rollouts[web]
	o.Analysis = Pass
	halfReported.Members["prod-eu"].Rollouts[web] = o
	inconclusive := record(gated, []string{"staging", "prod"}, map[string]State{"staging": Succeeded, "prod-us": Succeeded})
	o = inconclusive.Members["prod-us"].Rollouts[web]
	o.Analysis = "Inconclusive"
	inconclusive.Members["prod-us"].Rollouts[web] = o
	failed.Analysis = map[string]Gate{"prod": {Verdict: Fail, By: "error-ratio", At: t0}}
	rejected := record(gated, []string{"staging"}, map[string]State{"staging": Succeeded})
	rejected.Approved = map[string]Gate{"prod": {Verdict: Fail, By: "alice", At: t0}}
	recorded := record(policy(), []string{"staging"}, map[string]State{"staging": Succeeded})
	recorded.Halt = &Halt{Stage: "staging", Reason: "Operator"}

	for _, tc := range []struct {
		name   string
		r      *Record
		start  []string
		states []StageState
		halt   *Halt
		done   bool
	}{
		{"a new push starts the first stage", record(policy(), nil, nil),
			[]string{"staging"}, []StageState{Starting, Pending}, nil, false},
		{"released, nothing reported", record(policy(), []string{"staging"}, nil),
			nil, []StageState{Running, Pending}, nil, false},
		{"staging succeeded: prod starts", record(policy(), []string{"staging"}, map[string]State{"staging": Succeeded}),
			[]string{"prod"}, []StageState{Done, Starting}, nil, false},
		{"one prod cluster done", record(policy(), []string{"staging", "prod"},
			map[string]State{"staging": Succeeded, "prod-eu": Succeeded}),
			nil, []StageState{Done, Running}, nil, false},
		{"all done", record(policy(), []string{"staging", "prod"},
			map[string]State{"staging": Succeeded, "prod-eu": Succeeded, "prod-us": Succeeded}),
			nil, []StageState{Done, Done}, nil, true},
		{"staging halted: prod never starts", record(policy(), []string{"staging"}, map[string]State{"staging": Halted}),
			nil, []StageState{HaltedHere, Stopped},
			&Halt{Stage: "staging", Cluster: "staging", Workload: web, Reason: "RolloutHalted",
				Message: web + " in staging: r ", At: t0}, false},
		{"staging failed", record(policy(), []string{"staging"}, map[string]State{"staging": Failed}),
			nil, []StageState{HaltedHere, Stopped},
			&Halt{Stage: "staging", Cluster: "staging", Workload: web, Reason: "RolloutFailed",
				Message: web + " in staging: r ", At: t0}, false},
		{"a halt in prod stops nothing released", record(policy(), []string{"staging", "prod"},
			map[string]State{"staging": Succeeded, "prod-eu": Halted, "prod-us": Succeeded}),
			nil, []StageState{Done, HaltedHere},
			&Halt{Stage: "prod", Cluster: "prod-eu", Workload: web, Reason: "RolloutHalted",
				Message: web + " in prod-eu: r ", At: t0}, false},
		{"a recorded halt stays", recorded, nil, []StageState{HaltedHere, Stopped}, recorded.Halt, false},
		{"approval awaited", record(gated, []string{"staging"}, map[string]State{"staging": Succeeded}),
			nil, []StageState{Done, AwaitingApproval}, nil, false},
		{"approved", approved, []string{"prod"}, []StageState{Done, Starting}, nil, false},
		{"approval rejected", rejected, nil, []StageState{Done, HaltedHere},
			&Halt{Stage: "prod", Reason: "ApprovalRejected", Message: "stage prod was rejected (alice)", At: t0}, false},
		{"a cluster's rollout ran no analysis", analysed, nil, []StageState{Done, HaltedHere},
			&Halt{Stage: "prod", Cluster: "prod-eu", Workload: web, Reason: "AnalysisMissing",
				Message: "stage prod asks for an analysis; " + web + " in prod-eu completed but ran no analysis (the workload names none in inplace.dev/analysis)",
				At:      t0}, false},
		{"every cluster's analysis passed", reported, nil, []StageState{Done, Done}, nil, true},
		{"one cluster's analysis passed, the other not reported", halfReported, nil, []StageState{Done, Running}, nil, false},
		{"a completed rollout's analysis was not Passed", inconclusive, nil, []StageState{Done, HaltedHere},
			&Halt{Stage: "prod", Cluster: "prod-us", Workload: web, Reason: "AnalysisMissing",
				Message: "stage prod asks for an analysis; " + web + " in prod-us completed but ended with analysis Inconclusive",
				At:      t0}, false},
		{"analysis passed", &passed, nil, []StageState{Done, Done}, nil, true},
		{"analysis failed", &failed, nil, []StageState{Done, HaltedHere},
			&Halt{Stage: "prod", Reason: "AnalysisFailed", Message: "the analysis of stage prod failed (error-ratio)", At: t0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.r)
			var states []StageState
			for _, s := range d.Stages {
				states = append(states, s.State)
			}
			if diff := cmp.Diff(tc.start, d.Start); diff != "" {
				t.Errorf("Start (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.states, states); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.halt, d.Halt); diff != "" {
				t.Errorf("Halt (-want +got):\n%s", diff)
			}
			if d.Done != tc.done {
				t.Errorf("Done = %v, want %v", d.Done, tc.done)
			}
		})
	}
}

func TestDecideWaiting(t *testing.T) {
	r := record(policy(), []string{"staging", "prod"}, map[string]State{"staging": Succeeded, "prod-eu": Succeeded})
	want := []string{"prod-us: " + web}
	if diff := cmp.Diff(want, Decide(r).Stages[1].Waiting); diff != "" {
		t.Errorf("Waiting (-want +got):\n%s", diff)
	}
}

func (p Policy) stage(name string) int {
	for i, s := range p.Stages {
		if s.Name == name {
			return i
		}
	}
	return -1
}

func TestApprovable(t *testing.T) {
	gated := policy()
	gated.Stages[1].Approval = true
	awaiting := record(gated, []string{"staging"}, map[string]State{"staging": Succeeded})
	released := record(gated, []string{"staging", "prod"}, map[string]State{"staging": Succeeded})
	halted := record(gated, []string{"staging"}, map[string]State{"staging": Halted})
	for _, tc := range []struct {
		name, stage string
		r           *Record
		err         string
	}{
		{"awaiting approval", "prod", awaiting, ""},
		{"decided ahead while staging runs", "prod", record(gated, []string{"staging"}, nil), ""},
		{"a stage of no approval", "staging", awaiting, `stage "staging": its policy asks for no approval`},
		{"no such stage", "qa", awaiting, `stage "qa": not in the push's policy`},
		{"released already", "prod", released, `stage "prod": Running`},
		{"halted", "prod", halted, `stage "prod": the fleet halted in staging (RolloutHalted)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Approvable(tc.r, tc.stage)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNotApprovable)) {
				t.Errorf("Approvable = %v, want %q", err, tc.err)
			}
		})
	}
}
