package computespec

import (
	"strconv"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// WorkloadPlan is what a push would do to one workload.
type WorkloadPlan struct {
	Workload events.ObjectRef `json:"workload"`
	// Skip says why nothing would happen to the workload.
	Skip string `json:"skip,omitempty"`
	// Budget is its max-unavailable, resolved; BudgetFrom where it comes from.
	Budget     int    `json:"budget,omitempty"`
	BudgetFrom string `json:"budgetFrom,omitempty"`
	// Waves lists the pods of each wave, in order, as far as they can be
	// foreseen (every pod Ready, each wave done before the next).
	Waves [][]*rollout.Pod `json:"waves,omitempty"`
	// Current are pods that need nothing, with the reason.
	Current []*rollout.Pod `json:"current,omitempty"`
}

// DryRun answers "what would this push do" with the same discovery, policy
// and wave logic as a real push, writing nothing.
func DryRun(c Cache, d config.Defaults, push events.UpgradeRequestData) ([]WorkloadPlan, error) {
	targets, err := Discover(c, d, push)
	if err != nil {
		return nil, err
	}
	out := make([]WorkloadPlan, 0, len(targets))
	for _, t := range targets {
		wp := WorkloadPlan{Workload: t.Workload.Ref, Skip: t.Skip}
		if t.Skip != "" {
			out = append(out, wp)
			continue
		}
		pods, err := c.PodsOf(t.Workload.Ref)
		if err != nil {
			return nil, err
		}
		cands := planner.Candidates(t.Workload.Ref.Kind, pods, push, t.Options.Policy)
		if !planner.NeedsWork(cands) {
			wp.Skip = "every pod already runs the push or is planner.Skipped"
		}
		wp.Budget, wp.BudgetFrom = t.Budget, t.BudgetFrom
		wp.Waves, wp.Current = simulate(t, push, cands)
		out = append(out, wp)
	}
	return out, nil
}

// simulate runs the rollout state machine on a copy, completing each wave
// before planning the next.
func simulate(t controller.Target, push events.UpgradeRequestData, cands []rollout.Candidate) ([][]*rollout.Pod, []*rollout.Pod) {
	r := rollout.Begin(nil, "dry-run", t.Workload.Ref, push, t.RolloutOptions(), nowZero)
	var waves [][]*rollout.Pod
	for i := 0; i < len(cands)+1; i++ {
		planned := rollout.Plan(r, cands, "wave-"+strconv.Itoa(i), false, nowZero)
		if len(planned) == 0 {
			break
		}
		waves = append(waves, planned)
		for _, p := range planned {
			p.State = rollout.Succeeded
			for j := range cands {
				if cands[j].Pod.Name == p.Name {
					cands[j].Ready, cands[j].Containers = true, nil
				}
			}
		}
	}
	var current []*rollout.Pod
	for _, p := range r.Pods {
		if p.State == rollout.Current {
			current = append(current, p)
		}
	}
	return waves, current
}

// nowZero stamps dry-run states; nothing reads their times.
var nowZero = time.Time{}
