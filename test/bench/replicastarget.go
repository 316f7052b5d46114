package main

import (
	"fmt"
	"strings"
)

// replicasTarget compares the scale run with several replicas per
// function against the run with one of the same round, and takes the
// median of the rounds' ratios. Where it is missed it says where the
// extra replicas' time goes: how busy the machine's CPUs were, and the
// CPU the replicas spent against one replica's for the same rollout.
func (r *report) replicasTarget() []target {
	var out []target
	for _, n := range r.replicaCounts() {
		if n <= 1 {
			continue
		}
		t := target{Name: fmt.Sprintf("%d replicas per function faster than 1 (scale run)", n),
			Want: "> 1x", Got: "not measured"}
		var ratios []float64
		var each []string
		var pair *[2]throughput
		for _, many := range r.Throughput {
			if many.Replicas != n || many.Error != "" || many.Unavailable != "" {
				continue
			}
			for _, one := range r.Throughput {
				if one.Replicas == 1 && one.Round == many.Round && one.Error == "" && one.Unavailable == "" {
					x := many.PodsPerSec / max(one.PodsPerSec, 1e-9)
					ratios = append(ratios, x)
					each = append(each, fmt.Sprintf("%.2fx (%.1f vs %.1f pods/s)", x, many.PodsPerSec, one.PodsPerSec))
					pair = &[2]throughput{one, many}
				}
			}
		}
		if len(ratios) > 0 {
			m := median(ratios)
			t.Got = each[0]
			if len(ratios) > 1 {
				t.Got = fmt.Sprintf("median %.2fx over %d rounds: %s", m, len(ratios), strings.Join(each, ", "))
			}
			t.Met = ptr(m > 1)
			if !*t.Met {
				t.Where = replicasWhere(pair[0], pair[1])
			}
		}
		out = append(out, t)
	}
	return out
}

// replicasWhere says how busy the CPUs were and what each replica spent.
func replicasWhere(one, many throughput) string {
	var each []string
	total := 0.0
	for _, s := range many.Shares {
		each = append(each, fmt.Sprintf("%.1f", s.CPUSeconds))
		total += s.CPUSeconds
	}
	oneCPU := 0.0
	for _, s := range one.Shares {
		oneCPU += s.CPUSeconds
	}
	round := ""
	if many.Round > 0 {
		round = fmt.Sprintf(" (round %d)", many.Round)
	}
	return fmt.Sprintf("the machine's CPUs were %.0f%% busy with 1 replica and %.0f%% with %d%s; the %d replicas spent %.1f s of CPU (%s) where 1 spent %.1f s on the same rollout",
		100*one.MachineBusy, 100*many.MachineBusy, many.Replicas, round, many.Replicas, total, strings.Join(each, " + "), oneCPU)
}
