package main

import (
	"fmt"
	"strings"
)

// replicasTarget compares the scale run with several replicas per
// function against the run with one. Where it is missed it says where the
// extra replicas' time goes: how busy the machine's CPUs were, and the
// CPU the replicas spent against one replica's for the same rollout.
func (r *report) replicasTarget() []target {
	var one *throughput
	for i, tp := range r.Throughput {
		if tp.Replicas == 1 && tp.Error == "" && tp.Unavailable == "" {
			one = &r.Throughput[i]
		}
	}
	var out []target
	for _, tp := range r.Throughput {
		if tp.Replicas <= 1 {
			continue
		}
		t := target{Name: fmt.Sprintf("%d replicas per function faster than 1 (scale run)", tp.Replicas),
			Want: "> 1x", Got: "not measured"}
		if one != nil && tp.Error == "" && tp.Unavailable == "" {
			x := tp.PodsPerSec / max(one.PodsPerSec, 1e-9)
			t.Got = fmt.Sprintf("%.2fx (%.1f vs %.1f pods/s)", x, tp.PodsPerSec, one.PodsPerSec)
			t.Met = ptr(x > 1)
			if !*t.Met {
				t.Where = replicasWhere(*one, tp)
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
	return fmt.Sprintf("the machine's CPUs were %.0f%% busy with 1 replica and %.0f%% with %d; the %d replicas spent %.1f s of CPU (%s) where 1 spent %.1f s on the same rollout",
		100*one.MachineBusy, 100*many.MachineBusy, many.Replicas, many.Replicas, total, strings.Join(each, " + "), oneCPU)
}
