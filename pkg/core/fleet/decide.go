package fleet

import (
	"fmt"
	"slices"
)

// StageState is where a stage stands.
type StageState string

const (
	// Pending: a stage before it is not done.
	Pending StageState = "Pending"
	// AwaitingApproval: the stages before it are done; an approver must
	// let it start.
	AwaitingApproval StageState = "AwaitingApproval"
	// Starting: it may start now (Decision.Start names it).
	Starting StageState = "Starting"
	// Running: released; its clusters' rollouts are not all succeeded.
	Running StageState = "Running"
	// AwaitingAnalysis: every rollout succeeded; the stage's analysis
	// verdict is not in yet.
	AwaitingAnalysis StageState = "AwaitingAnalysis"
	// Done: every rollout of its clusters succeeded (and the analysis
	// passed, where named).
	Done StageState = "Done"
	// Stopped: the fleet halted; the stage never starts.
	Stopped StageState = "Stopped"
	// HaltedHere: the halt happened in this stage.
	HaltedHere StageState = "Halted"
)

// Decision is what the fleet does now.
type Decision struct {
	// Start are the stages to release now, in order.
	Start []string
	// Stages is every stage's state, in the policy's order.
	Stages []StageStatus
	// Halt is set when the fleet is halted: recorded, or found now in a
	// member's reports (the caller records it).
	Halt *Halt
	// Done: every stage is done.
	Done bool
}

// StageStatus is one stage's state and what it waits for.
type StageStatus struct {
	Name  string
	State StageState
	// Waiting names what a Running stage waits for, cluster by cluster
	// ("staging: Deployment/shop/web").
	Waiting []string
}

// Decide derives the fleet's state from the record alone: the same record
// always gives the same decision. A recorded halt is kept; otherwise the
// first failed or halted rollout of a released stage (in the policy's
// order) or a failed analysis halts the fleet.
func Decide(r *Record) Decision {
	d := Decision{Halt: r.Halt}
	if d.Halt == nil {
		d.Halt = findHalt(r)
	}
	prevDone := true
	for _, s := range r.Policy.Stages {
		st := stageStatus(r, s, prevDone, d.Halt)
		if st.State == Starting {
			d.Start = append(d.Start, s.Name)
		}
		prevDone = st.State == Done
		d.Stages = append(d.Stages, st)
	}
	d.Done = prevDone
	return d
}

func stageStatus(r *Record, s Stage, prevDone bool, halt *Halt) StageStatus {
	st := StageStatus{Name: s.Name}
	_, released := r.Released[s.Name]
	switch {
	case halt != nil && halt.Stage == s.Name:
		st.State = HaltedHere
	case !released && halt != nil:
		st.State = Stopped
	case !released && !prevDone:
		st.State = Pending
	case !released && s.Approval && r.Approved[s.Name].Verdict != Pass:
		st.State = AwaitingApproval
	case !released:
		st.State = Starting
	default:
		st.Waiting = waiting(r, s)
		st.State = Running
		if len(st.Waiting) == 0 {
			st.State = Done
			if s.Analysis && !analysisPassed(r, s) {
				st.State = AwaitingAnalysis
			}
		}
	}
	return st
}

// waiting lists the stage's cluster/workload pairs without a succeeded
// rollout.
func waiting(r *Record, s Stage) []string {
	var out []string
	for _, c := range s.Clusters {
		for _, w := range r.Policy.Workloads {
			if r.Members[c].Rollouts[w].State != Succeeded {
				out = append(out, c+": "+w)
			}
		}
	}
	return out
}

// findHalt is the first bad outcome or failed analysis of a released
// stage, or a rejected approval of a stage not released yet.
func findHalt(r *Record) *Halt {
	for _, s := range r.Policy.Stages {
		if _, ok := r.Released[s.Name]; !ok {
			if g, ok := r.Approved[s.Name]; ok && s.Approval && g.Verdict == Fail {
				return &Halt{Stage: s.Name, Reason: "ApprovalRejected",
					Message: fmt.Sprintf("stage %s was rejected (%s)", s.Name, g.By), At: g.At}
			}
			continue
		}
		for _, c := range s.Clusters {
			if h := memberHalt(r.Members[c], s.Name, c); h != nil {
				return h
			}
		}
		if g, ok := r.Analysis[s.Name]; ok && g.Verdict == Fail {
			return &Halt{Stage: s.Name, Reason: "AnalysisFailed",
				Message: fmt.Sprintf("the analysis of stage %s failed (%s)", s.Name, g.By), At: g.At}
		}
		if h := analysisMissing(r, s); h != nil {
			return h
		}
	}
	return nil
}

func memberHalt(m Member, stage, cluster string) *Halt {
	keys := make([]string, 0, len(m.Rollouts))
	for w := range m.Rollouts {
		keys = append(keys, w)
	}
	slices.Sort(keys)
	for _, w := range keys {
		o := m.Rollouts[w]
		if o.State.Bad() {
			return &Halt{Stage: stage, Cluster: cluster, Workload: w, Reason: "Rollout" + string(o.State),
				Message: fmt.Sprintf("%s in %s: %s %s", w, cluster, o.Reason, o.Message), At: o.ReceivedAt}
		}
	}
	return nil
}

// analysisPassed: a stage that asks for an analysis has a Passed verdict,
// recorded for the stage (Controller.Analysed) or, without one, reported by
// every cluster of it for every workload (each rollout's own canary
// analysis passed).
func analysisPassed(r *Record, s Stage) bool {
	if g, ok := r.Analysis[s.Name]; ok {
		return g.Verdict == Pass
	}
	for _, c := range s.Clusters {
		for _, w := range r.Policy.Workloads {
			if o := r.Members[c].Rollouts[w]; o.State != Succeeded || o.Analysis != Pass {
				return false
			}
		}
	}
	return true
}

// analysisMissing halts a stage that asks for an analysis when one of its
// clusters reports a rollout that succeeded without a passed analysis of
// its own (its workload names none), so the stage can never be done: the
// fleet stops there and says which workload where, instead of waiting for
// ever. A verdict recorded for the stage stands instead.
func analysisMissing(r *Record, s Stage) *Halt {
	if _, ok := r.Analysis[s.Name]; ok || !s.Analysis {
		return nil
	}
	for _, c := range s.Clusters {
		for _, w := range r.Policy.Workloads {
			o, ok := r.Members[c].Rollouts[w]
			if !ok || o.State != Succeeded || o.Analysis == Pass {
				continue
			}
			ran := "ran no analysis (the workload names none in inplace.dev/analysis)"
			if o.Analysis != "" {
				ran = "ended with analysis " + o.Analysis
			}
			return &Halt{Stage: s.Name, Cluster: c, Workload: w, Reason: "AnalysisMissing",
				Message: fmt.Sprintf("stage %s asks for an analysis; %s in %s completed but %s", s.Name, w, c, ran),
				At:      o.ReceivedAt}
		}
	}
	return nil
}
