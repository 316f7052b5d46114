package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
)

// print writes the report as tables.
func (r *report) print(out io.Writer) {
	m := r.Machine
	fmt.Fprintf(out, "\ninplace benchmark: %s, %s nodes, %d CPUs (%s), %.0f GiB, %s; load average %.1f at the start, %.1f at the end; %.1f minutes\n",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Nodes, m.CPUs, m.Model, m.MemoryGiB, m.Go, m.LoadStart[0], m.LoadEnd[0], r.Minutes)
	fmt.Fprintf(out, "command: %s\n", r.Command)
	for _, p := range r.Profiles {
		fmt.Fprintf(out, "\nThe simulated node, profile %q:\n", p.Name)
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		for _, k := range p.Knobs {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Name, k.Value, k.Source)
		}
		tw.Flush()
	}
	r.printRollouts(out)
	r.printScale(out)
	r.printTargets(out)
	fmt.Fprintln(out, "\nHow each figure is taken:")
	for _, s := range r.Sources {
		fmt.Fprintf(out, "  - %s\n", s)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(out, "ERROR: %s\n", e)
	}
}

func (r *report) printRollouts(out io.Writer) {
	if len(r.Rollouts) == 0 {
		return
	}
	fmt.Fprintln(out, "\nRollouts (simulated nodes: profile \"realistic\"; real-*: real nodes; every workload has the readiness gate inplace.dev/ready and a Service):")
	r.printReal(out)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\trun\tpods\tmax-unavailable\ttime\tvs native\tfailed requests\twrites/pod: inplace\tkubelet\tscheduler\tcontrollers\tevents\tCPU ms/pod: inplace\tcontrol plane\tload\t")
	for _, x := range r.Rollouts {
		vs := ""
		if nat := r.find(x.Scenario, nativeSame); nat != nil && x.Error == "" {
			vs = fmt.Sprintf("%.2fx", x.Seconds/nat.Seconds)
		}
		t := fmt.Sprintf("%.1fs", x.Seconds)
		if x.Error != "" {
			t = "FAILED"
		}
		w := x.WritesPerPod
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t\n", x.Scenario, x.Run, x.Pods, x.MaxUnavailable, t, vs,
			x.Traffic.String(), writes(w, x.FailedWritesPerPod, actorProject), f1(w[actorKubelet]), f1(w[actorScheduler]), f1(w[actorControllers]), f1(w[actorEvents]),
			f0(x.CPUMsPerPod["inplace"]), f0(x.CPUMsPerPod["control plane"]), x.LoadAverage)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nWhere the time goes, in place:")
	for _, x := range r.Rollouts {
		if x.Run == inPlace && len(x.Phases) > 0 {
			fmt.Fprintf(out, "  %s:\n", x.Scenario)
			printPhases(out, x.Phases)
		}
		if x.Error != "" {
			fmt.Fprintf(out, "  %s, %s: %s\n", x.Scenario, x.Run, x.Error)
		}
	}
}

// printReal says what the real-node rows ran on, or why there are none.
func (r *report) printReal(out io.Writer) {
	switch {
	case r.RealNodes != "":
		fmt.Fprintf(out, "  real-*: %s; failed requests: the traffic probe (a pod, 50 requests/s to the Service by its DNS name, through kube-proxy) during the run and %s after\n", r.RealNodes, trafficTail)
	case r.RealUnavailable != "":
		fmt.Fprintf(out, "  no real-node rows: %s\n", r.RealUnavailable)
	}
}

func printPhases(out io.Writer, ps []phase) {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(tw, "    %s\t%.2fs\t%s\n", p.Name, p.Seconds, p.Note)
	}
	tw.Flush()
}

func (r *report) printScale(out io.Writer) {
	if len(r.Throughput) > 0 {
		fmt.Fprintln(out, "\nScale (profile \"zero\"; one Deployment, max-unavailable 100%, no gate, webhook → rollout.completed):")
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "replicas per function\tpods\ttime\tpods/s\tinplace requests/pod\twrites/pod: inplace\tkubelet\tscheduler\tcontrollers\tevents\tCPU ms/pod: inplace\tcontrol plane\tload\t")
		for _, t := range r.Throughput {
			if t.Unavailable != "" {
				fmt.Fprintf(tw, "%d\t%d\tnot available\t\t\t\t\t\t\t\t\t\t\t\n", t.Replicas, t.Pods)
				continue
			}
			tm := fmt.Sprintf("%.1fs", t.Seconds)
			if t.Error != "" {
				tm = "FAILED"
			}
			w := t.WritesPerPod
			fmt.Fprintf(tw, "%d\t%d\t%s\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t\n", t.Replicas, t.Pods, tm, t.PodsPerSec, t.RequestsPerPod,
				writes(w, t.FailedWritesPerPod, actorProject), f1(w[actorKubelet]), f1(w[actorScheduler]), f1(w[actorControllers]), f1(w[actorEvents]),
				f0(t.CPUMsPerPod["inplace"]), f0(t.CPUMsPerPod["control plane"]), t.LoadAverage)
		}
		if f := r.Floor; f != nil {
			fmt.Fprintf(tw, "floor (kubelet alone)\t%d\t%.1fs\t%.1f\t\t%s\t%s\t%s\t%s\t%s\t\t%s\t%.1f\t\n", f.Pods, f.Seconds, float64(f.Pods)/max(f.Seconds, 1e-9),
				"-", f1(f.WritesPerPod[actorKubelet]), f1(f.WritesPerPod[actorScheduler]), f1(f.WritesPerPod[actorControllers]),
				f1(f.WritesPerPod[actorEvents]), f0(f.CPUMsPerPod["control plane"]), f.LoadAverage)
		}
		tw.Flush()
		for _, t := range r.Throughput {
			if t.Unavailable != "" {
				fmt.Fprintf(out, "  %d replicas per function: not available: %s\n", t.Replicas, t.Unavailable)
				continue
			}
			fmt.Fprintf(out, "  %d replica(s), the project's requests: %s\n", t.Replicas, detail(t.ProjectRequests, t.Pods))
			printPhases(out, t.Phases)
			fmt.Fprintf(out, "    CPU (cores): inplace %.2f, control plane %.2f, %s %.2f; the machine's %d CPUs %.0f%% busy (every process)\n",
				cores(t.CPUMsPerPod["inplace"], t), cores(t.CPUMsPerPod["control plane"], t), benchProcess, cores(t.CPUMsPerPod[benchProcess], t),
				runtime.NumCPU(), 100*t.MachineBusy)
			if by := controlPlaneByProcess(t.CPUMsPerPod, r.roundFloor(t.Round)); by != "" {
				fmt.Fprintf(out, "    control plane, CPU ms per pod by process (the round's floor): %s\n", by)
			}
			for _, s := range t.Shares {
				fmt.Fprintf(out, "    replica %s\n", s)
			}
			if len(t.Shares) > 0 {
				fmt.Fprintf(out, "    bus messages per pod, every replica's: %s\n", messagesPerPod(t.Shares, t.Pods))
			}
			if t.Error != "" {
				fmt.Fprintf(out, "  %d replica(s): %s\n", t.Replicas, t.Error)
			}
		}
	}
	if l := r.Latency; l != nil {
		fmt.Fprintf(out, "\nWebhook → first patch: p50 %.0f ms, p99 %.0f ms over %d samples (%s)\n", l.P50ms, l.P99ms, l.Samples, l.Definition)
		printPhases(out, l.Phases)
		if l.Error != "" {
			fmt.Fprintf(out, "  %s\n", l.Error)
		}
	}
	if len(r.Memory) > 0 {
		fmt.Fprintln(out, "\nMemory of `inplace run` (every function, embedded NATS):")
		for _, m := range r.Memory {
			if m.Error != "" {
				fmt.Fprintf(out, "  %d pods: %s\n", m.Pods, m.Error)
				continue
			}
			fmt.Fprintf(out, "  watching %d pods: VmRSS %.0f MiB, VmHWM %.0f MiB, ready %.1fs after start\n", m.Pods, m.RSSMiB, m.HWMMiB, m.ReadySeconds)
			if w := m.where(); w != "" {
				fmt.Fprintf(out, "    %s\n", w)
			}
		}
	}
}

func (r *report) printTargets(out io.Writer) {
	fmt.Fprintln(out, "\nTargets:")
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	for _, t := range r.Targets {
		met := "not measured"
		if t.Met != nil && *t.Met {
			met = "met"
		} else if t.Met != nil {
			met = "MISSED"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Name, t.Want, t.Got, met)
	}
	tw.Flush()
	for _, t := range r.Targets {
		if t.Where != "" {
			what := "time"
			if strings.HasPrefix(t.Name, "RSS") {
				what = "memory"
			}
			fmt.Fprintf(out, "  where the %s goes (%s): %s\n", what, t.Name, t.Where)
		}
	}
}

// writes shows an actor's writes per pod, and how many of them failed.
func writes(w, failed map[string]float64, actor string) string {
	s := f1(w[actor])
	if f := failed[actor]; f > 0 {
		s += fmt.Sprintf(" (%.1f failed)", f)
	}
	return s
}

// detail lists request counts per pod, largest first.
func detail(m map[string]int, pods int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.v != b.v {
			return b.v - a.v
		}
		return strings.Compare(a.k, b.k)
	})
	var parts []string
	for _, x := range all {
		parts = append(parts, fmt.Sprintf("%.2f %s", float64(x.v)/float64(max(pods, 1)), x.k))
	}
	return strings.Join(parts, ", ")
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f0(v float64) string { return fmt.Sprintf("%.0f", v) }

// cores is CPU milliseconds per pod over a run as cores used on average.
func cores(msPerPod float64, t throughput) float64 {
	return msPerPod * float64(t.Pods) / 1000 / max(t.Seconds, 1e-9)
}
