package fleet

import (
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Status is one push through the fleet as people read it: every stage,
// every cluster of it, every workload's rollout there.
type Status struct {
	Push      string        `json:"push"`
	Target    string        `json:"target"`
	StartedAt time.Time     `json:"startedAt"`
	Done      bool          `json:"done"`
	Halt      *Halt         `json:"halt,omitempty"`
	Stages    []StageReport `json:"stages"`
}

// StageReport is one stage of a Status.
type StageReport struct {
	Name       string          `json:"name"`
	State      StageState      `json:"state"`
	ReleasedAt time.Time       `json:"releasedAt,omitzero"`
	Approval   *Gate           `json:"approval,omitempty"`
	Analysis   *Gate           `json:"analysis,omitempty"`
	Clusters   []ClusterReport `json:"clusters"`
}

// ClusterReport is one cluster of a stage.
type ClusterReport struct {
	Cluster  string          `json:"cluster"`
	SentAt   time.Time       `json:"sentAt,omitzero"`
	Rollouts []RolloutReport `json:"rollouts"`
}

// RolloutReport is one workload's rollout in one cluster. UpgradeID is
// the id the member derives for it (for `inplace trace` there); State is
// empty until the member reported an outcome.
type RolloutReport struct {
	Workload  string    `json:"workload"`
	UpgradeID string    `json:"upgradeID"`
	State     State     `json:"state,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	At        time.Time `json:"at,omitzero"`
}

// Summarize is the status of r, stage by stage in the policy's order.
func Summarize(r *Record) Status {
	d := Decide(r)
	s := Status{Push: r.Push, Target: r.Target, StartedAt: r.StartedAt, Done: d.Done, Halt: d.Halt}
	for i, st := range r.Policy.Stages {
		sr := StageReport{Name: st.Name, State: d.Stages[i].State, ReleasedAt: r.Released[st.Name],
			Approval: gate(r.Approved, st.Name), Analysis: gate(r.Analysis, st.Name)}
		for _, c := range st.Clusters {
			sr.Clusters = append(sr.Clusters, clusterReport(r, c))
		}
		s.Stages = append(s.Stages, sr)
	}
	return s
}

func clusterReport(r *Record, cluster string) ClusterReport {
	cr := ClusterReport{Cluster: cluster, SentAt: r.Sent[cluster], Rollouts: []RolloutReport{}}
	for _, w := range r.Policy.Workloads {
		rr := RolloutReport{Workload: w}
		if ref, err := ParseWorkload(w); err == nil {
			rr.UpgradeID = events.DeriveUpgradeID(r.Push, ref)
		}
		if o, ok := r.Members[cluster].Rollouts[w]; ok {
			rr.State, rr.Reason, rr.Message, rr.At = o.State, o.Reason, o.Message, o.At
		}
		cr.Rollouts = append(cr.Rollouts, rr)
	}
	return cr
}

func gate(m map[string]Gate, stage string) *Gate {
	if g, ok := m[stage]; ok {
		return &g
	}
	return nil
}
