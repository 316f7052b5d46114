package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

func printPlans(w io.Writer, push events.ImagePushedData, plans []workloadPlan) {
	if len(plans) == 0 {
		fmt.Fprintf(w, "no workload runs %s: nothing would change\n", push.Name())
		return
	}
	for _, p := range plans {
		fmt.Fprintf(w, "%s\n", p.Workload)
		if p.Skip != "" {
			fmt.Fprintf(w, "  skipped: %s\n", p.Skip)
		}
		if len(p.Waves) > 0 {
			fmt.Fprintf(w, "  max-unavailable %d (%s), %d wave(s):\n", p.Budget, p.BudgetFrom, len(p.Waves))
		}
		waves := p.Waves
		if a := p.Analysis; a != nil {
			printAnalysis(w, a)
			waves = a.Remaining
		}
		for i, wave := range waves {
			fmt.Fprintf(w, "    wave %d: %s\n", i+1, podList(wave, "\n            "))
		}
		for _, pod := range p.Current {
			fmt.Fprintf(w, "  unchanged %s: %s\n", pod.Name, pod.Reason)
		}
	}
}

// podList is each pod with its node and container changes.
func podList(pods []*rollout.Pod, sep string) string {
	var out []string
	for _, pod := range pods {
		var cs []string
		for _, c := range pod.Containers {
			cs = append(cs, c.Name+" "+c.FromImage+" → "+c.ToImage)
		}
		out = append(out, fmt.Sprintf("%s on %s (%s)", pod.Name, pod.Node, strings.Join(cs, ", ")))
	}
	return strings.Join(out, sep)
}

func printAnalysis(w io.Writer, a *analysisPlan) {
	if a.Error != "" {
		fmt.Fprintf(w, "  analysis (%s): %s\n", a.From, a.Error)
		return
	}
	fmt.Fprintf(w, "  analysis (%s), %d step(s) before the remaining waves:\n", a.From, len(a.Steps))
	for i, st := range a.Steps {
		if st.Approval {
			fmt.Fprintf(w, "    step %d: approval: waits for inplace approve UPGRADE\n", i+1)
			continue
		}
		fmt.Fprintf(w, "    step %d: canary %s: %d of %d pod(s) on the new version\n", i+1, st.Canary, st.Pods, st.Replicas)
		if len(st.Move) > 0 {
			fmt.Fprintf(w, "      moves %s\n", podList(st.Move, "\n            "))
		}
		if st.Bake != "" {
			fmt.Fprintf(w, "      bake %s\n", st.Bake)
		}
		if m := st.Analysis; m != nil {
			fmt.Fprintf(w, "      measure %s\n", cadence(m))
		}
		for _, q := range st.Queries {
			printQuery(w, q)
		}
	}
	if len(a.Remaining) > 0 {
		fmt.Fprintf(w, "    then %d wave(s):\n", len(a.Remaining))
	}
}

// cadence is how often and how long a step measures, defaults resolved.
func cadence(m *analysis.Analysis) string {
	count, interval, errs := m.Count, m.Interval.D(), analysis.DefaultErrorLimit
	if count == 0 {
		count = analysis.DefaultCount
	}
	if interval == 0 {
		interval = analysis.DefaultInterval
	}
	if m.ErrorLimit != nil {
		errs = *m.ErrorLimit
	}
	s := fmt.Sprintf("%d time(s) every %s, %d failure(s) and %d inconclusive in a row tolerated",
		count, interval, m.FailureLimit, errs)
	if m.Deadline != "" {
		s += ", deadline " + string(m.Deadline)
	}
	return s
}

func printQuery(w io.Writer, q queryPlan) {
	if q.Error != "" {
		fmt.Fprintf(w, "      query %s: %s\n", q.Name, q.Error)
		return
	}
	fmt.Fprintf(w, "      query %s: want %s %g\n        %s\n", q.Name, q.Comparison, q.Threshold, q.Query)
	if q.Baseline != "" {
		fmt.Fprintf(w, "        minus the baseline: %s\n", q.Baseline)
	}
}
