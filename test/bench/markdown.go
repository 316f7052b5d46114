package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// markdownFrom prints the report a run wrote (bench.json) as the tables of
// docs/performance.md: `go run ./test/bench -markdown bench.json`.
func markdownFrom(path string, out io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	r.markdown(out)
	return nil
}

// markdown writes the report as Markdown tables.
func (r *report) markdown(out io.Writer) {
	m := r.Machine
	fmt.Fprintf(out, "`%s`, %s, %s nodes: %d CPUs (%s), %.0f GiB, %s; load average %.1f at the start, %.1f at the end "+
		"(the machine is shared); %.0f minutes.\n\n", r.Command, r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Nodes,
		m.CPUs, m.Model, m.MemoryGiB, m.Go, m.LoadStart[0], m.LoadEnd[0], r.Minutes)
	for _, p := range r.Profiles {
		fmt.Fprintf(out, "The simulated node, profile %q:\n\n| charged | value | source |\n|---|---|---|\n", p.Name)
		for _, k := range p.Knobs {
			fmt.Fprintf(out, "| %s | %s | %s |\n", k.Name, k.Value, k.Source)
		}
		fmt.Fprintln(out)
	}
	r.markdownRollouts(out)
	r.markdownScale(out)
	fmt.Fprintln(out, "| target | wanted | measured | |\n|---|---|---|---|")
	for _, t := range r.Targets {
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, verdict(t))
	}
	fmt.Fprintln(out)
	for _, t := range r.Targets {
		if t.Where != "" {
			fmt.Fprintf(out, "- %s, missed: %s\n", t.Name, t.Where)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(out, "- error: %s\n", e)
	}
}

func verdict(t target) string {
	switch {
	case t.Met == nil:
		return "not measured"
	case *t.Met:
		return "met"
	}
	return "**missed**"
}

func (r *report) markdownRollouts(out io.Writer) {
	if len(r.Rollouts) == 0 {
		return
	}
	switch {
	case r.RealNodes != "":
		fmt.Fprintf(out, "real-*: %s; failed requests: the traffic probe (a pod, 50 requests/s to the Service by its DNS name, through kube-proxy) during the run and %s after.\n\n", r.RealNodes, trafficTail)
	case r.RealUnavailable != "":
		fmt.Fprintf(out, "No real-node rows: %s.\n\n", r.RealUnavailable)
	}
	fmt.Fprintln(out, "| scenario | run | pods | max-unavailable | time | vs native | failed requests | writes/pod: inplace | kubelet | scheduler | controllers | events |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, x := range r.Rollouts {
		t, vs := fmt.Sprintf("%.1f s", x.Seconds), ""
		if x.Error != "" {
			t = "failed"
		} else if nat := r.find(x.Scenario, nativeSame); nat != nil {
			vs = fmt.Sprintf("%.2fx", x.Seconds/nat.Seconds)
		}
		w := x.WritesPerPod
		fmt.Fprintf(out, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", x.Scenario, x.Run, x.Pods, x.MaxUnavailable, t, vs,
			x.Traffic.String(), writes(w, x.FailedWritesPerPod, actorProject), f1(w[actorKubelet]), f1(w[actorScheduler]), f1(w[actorControllers]), f1(w[actorEvents]))
	}
	fmt.Fprintln(out)
	failed := false
	for _, x := range r.Rollouts {
		if x.Error != "" {
			fmt.Fprintf(out, "- %s, %s failed: %s\n", x.Scenario, x.Run, x.Error)
			failed = true
		}
	}
	if failed {
		fmt.Fprintln(out)
	}
	r.markdownTimelines(out)
}

// markdownTimelines prints, for each real-node run, its time by the actor
// it waited for and one pod's moments.
func (r *report) markdownTimelines(out io.Writer) {
	for _, x := range r.Rollouts {
		if len(x.Shares) == 0 {
			continue
		}
		fmt.Fprintf(out, "%s, %s%s. Its second pod:\n\n```\n%s\n```\n\n",
			x.Scenario, x.Run, r.sharesOf(&x), strings.Join(x.Timeline, "\n"))
	}
}

func (r *report) markdownScale(out io.Writer) {
	if len(r.Throughput) > 0 {
		fmt.Fprintln(out, "| scale run (max-unavailable 100%, zero kubelet delay) | round | pods | time | pods/s | inplace requests/pod | writes/pod: inplace |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
		round := func(n int) string {
			if n == 0 {
				return ""
			}
			return fmt.Sprint(n)
		}
		floors := r.scaleFloors()
		floor := func(f rollout) {
			if f.Error != "" {
				fmt.Fprintf(out, "| floor (the kubelet alone) | %s | %d | failed: %s | | | |\n", round(f.Round), f.Pods, f.Error)
				return
			}
			fmt.Fprintf(out, "| floor (the kubelet alone) | %s | %d | %.1f s | %.1f | | |\n", round(f.Round), f.Pods, f.Seconds, float64(f.Pods)/max(f.Seconds, 1e-9))
		}
		for i, t := range r.Throughput {
			switch {
			case t.Unavailable != "":
				fmt.Fprintf(out, "| %d replicas per function | | %d | not available: %s | | | |\n", t.Replicas, t.Pods, t.Unavailable)
			case t.Error != "":
				fmt.Fprintf(out, "| %d replica(s) per function | %s | %d | failed: %s | | | |\n", t.Replicas, round(t.Round), t.Pods, t.Error)
			default:
				fmt.Fprintf(out, "| %d replica(s) per function | %s | %d | %.1f s | %.1f | %.1f | %s |\n", t.Replicas, round(t.Round), t.Pods, t.Seconds, t.PodsPerSec,
					t.RequestsPerPod, writes(t.WritesPerPod, t.FailedWritesPerPod, actorProject))
			}
			// A round's floor follows its last run.
			if next := i + 1; next == len(r.Throughput) || r.Throughput[next].Round != t.Round {
				for _, f := range floors {
					if f.Round == t.Round {
						floor(f)
					}
				}
			}
		}
		fmt.Fprintln(out)
	}
	var lines []string
	if l := r.Latency; l != nil && l.Samples > 0 {
		lines = append(lines, fmt.Sprintf("Webhook → first patch: p50 %.0f ms, p99 %.0f ms over %d samples (%s).", l.P50ms, l.P99ms, l.Samples, l.Definition))
	}
	for _, m := range r.Memory {
		if m.Error == "" {
			s := fmt.Sprintf("`inplace run` watching %d pods: VmRSS %.0f MiB (peak %.0f MiB)", m.Pods, m.RSSMiB, m.HWMMiB)
			if w := m.where(); w != "" {
				s += "; " + w
			}
			lines = append(lines, s+".")
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(out, "%s\n\n", strings.Join(lines, "\n"))
	}
}
