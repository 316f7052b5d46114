package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// report is everything one benchmark run measured; it is printed as a
// table and written as JSON.
type report struct {
	Command    string       `json:"command"`
	Started    time.Time    `json:"started"`
	Minutes    float64      `json:"minutes"`
	Machine    machine      `json:"machine"`
	Nodes      string       `json:"nodes"`
	Profiles   []profile    `json:"profiles"`
	Scenarios  []scenario   `json:"scenarios"`
	Rollouts   []rollout    `json:"rollouts"`
	Throughput []throughput `json:"throughput"`
	// Floors are the scale run's floors, one a round; Floor is the one
	// floor of a report written before the scale run went in rounds.
	Floors  []rollout      `json:"throughputFloors,omitempty"`
	Floor   *rollout       `json:"throughputFloor,omitempty"`
	Latency *latency       `json:"webhookToFirstPatch,omitempty"`
	Memory  []memoryResult `json:"memory"`
	Targets []target       `json:"targets"`
	Sources []string       `json:"sources"`
	Errors  []string       `json:"errors,omitempty"`
	// RealNodes says what the real-node rows ran on; RealUnavailable why
	// there are none.
	RealNodes       string `json:"realNodes,omitempty"`
	RealUnavailable string `json:"realUnavailable,omitempty"`
}

// sources say how each measured figure was taken.
var sources = []string{
	"time, in place: the registry's webhook reaching the receiver (a proxy in front of it) → the benchmark receiving rollout.completed on the bus",
	"time, native: the template patch → `kubectl rollout status` complete (k8s.io/kubectl/pkg/polymorphichelpers' status viewer over a watch, as kubectl does)",
	"time, floor: the benchmark itself as an ideal controller (gate False and patch back to back, gate True once the kubelet has taken the patch up), the same restarts at the same budget; " +
		"where the image is not on the nodes, the first batch's kubelets pull it in their own sync and a pod like pre-pull's pulls it at once on every node only later batches run on",
	"writes and requests: the kube-apiserver audit log (every request once, at ResponseComplete, leases left out), by user agent and user: " +
		"inplace = the project's client (user agent \"inplace\"), kubelet = the nodes' status and deletes, scheduler = bindings (the simulated nodes' stand-in or kube-scheduler), " +
		"controllers = kube-controller-manager's service accounts, events = every Event whoever writes it; in the run's namespace and inplace-system (the pre-pull pods), per upgraded pod",
	"CPU: /proc/<pid>/stat utime+stime of the inplace processes, of the control plane (etcd, kube-apiserver, kube-controller-manager; in the scale runs also each, beside its round's floor) and, on hollow nodes, of the nodes and kube-scheduler; " +
		"the simulated nodes run inside the benchmark's own process and are not counted",
	"memory: /proc/<pid>/status VmRSS and VmHWM of a fresh `inplace run` (every function, embedded NATS), 10s after /readyz",
}

// target is one of the project's performance goals beside what was measured.
type target struct {
	Name  string `json:"name"`
	Want  string `json:"target"`
	Got   string `json:"measured"`
	Met   *bool  `json:"met"` // nil: not measured
	Where string `json:"whereTheTimeGoes,omitempty"`
}

func (r *report) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// find returns the rollout of a scenario's run, or nil.
func (r *report) find(sc string, k runKind) *rollout {
	for i := range r.Rollouts {
		if x := &r.Rollouts[i]; x.Scenario == sc && x.Run == k && x.Error == "" {
			return x
		}
	}
	return nil
}

// targets puts the project's performance goals beside the figures.
func (r *report) targets() []target {
	var out []target
	for _, sc := range r.Scenarios {
		out = append(out, r.ratioTarget(sc))
		if sc.TargetDefaults > 0 {
			out = append(out, r.defaultsTarget(sc))
		}
		if sc.Nodes == realNodes {
			out = append(out, r.trafficTarget(sc))
		}
	}
	out = append(out, r.writesTargets()...)
	out = append(out, r.throughputTarget())
	out = append(out, r.replicasTarget()...)
	out = append(out, r.latencyTarget())
	out = append(out, r.overheadTargets()...)
	return append(out, r.memoryTarget())
}

func (r *report) ratioTarget(sc scenario) target {
	t := target{Name: sc.Title + ": in place vs the native rolling update (same max-unavailable)",
		Want: fmt.Sprintf("≤ %.2fx", sc.Target)}
	ip, nat, def := r.find(sc.Name, inPlace), r.find(sc.Name, nativeSame), r.find(sc.Name, nativeDefaults)
	if ip == nil || nat == nil {
		t.Got = "not measured"
		return t
	}
	ratio := ip.Seconds / nat.Seconds
	t.Got = fmt.Sprintf("%.2fx (%.1fs / %.1fs)", ratio, ip.Seconds, nat.Seconds)
	if def != nil {
		t.Got += fmt.Sprintf("; vs native defaults %.2fx", ip.Seconds/def.Seconds)
	}
	t.Met = ptr(ratio <= sc.Target)
	if !*t.Met {
		t.Where = r.belowFloor(sc, nat, sc.Target) + whereTime(ip.Phases) + r.sharesOf(ip)
	}
	return t
}

// belowFloor says so when the goal asks in place to be faster than the
// kubelet alone can restart the pods (the floor run against native): no
// controller reaches it then, whatever it does.
func (r *report) belowFloor(sc scenario, native *rollout, goal float64) string {
	fl, ip := r.find(sc.Name, floorRun), r.find(sc.Name, inPlace)
	if fl == nil || fl.Error != "" || native == nil || ip == nil {
		return ""
	}
	ratio := fl.Seconds / native.Seconds
	if ratio <= goal {
		return ""
	}
	return fmt.Sprintf("the goal is below the kubelet's floor: an ideal in-place controller (the kubelet alone) took %.1fs, "+
		"%.2fx the native %.1fs, against the goal of %.2fx; in place took %.1fs, %+.1fs over that floor; ",
		fl.Seconds, ratio, native.Seconds, goal, ip.Seconds, ip.Seconds-fl.Seconds)
}

// sharesOf is a real-node run's time by the actor it waited for.
func (r *report) sharesOf(x *rollout) string {
	if len(x.Shares) == 0 {
		return ""
	}
	s := map[string]time.Duration{}
	for k, v := range x.Shares {
		s[k] = time.Duration(v * float64(time.Second))
	}
	return "; by who was waited for (timeline): " + sharesText(s)
}

// writesTargets judge the "writes per upgraded pod" by the
// project's writes to the pods themselves (patches of pods, pods/status,
// pods/resize): the guarded image + state patch, and the gate's two. The
// project's other writes per pod (template sync, pre-pull pods, the
// opted-in ConfigMap) are printed beside them.
func (r *report) writesTargets() []target {
	gated := target{Name: "this project's writes to each upgraded pod, with a readiness gate", Want: "≤ 3"}
	var parts []string
	worst := -1.0
	for _, sc := range r.Scenarios {
		if ip := r.find(sc.Name, inPlace); ip != nil {
			pw := float64(podWrites(ip.Requests[actorProject])) / float64(max(ip.Pods, 1))
			parts = append(parts, fmt.Sprintf("%.1f (%s; all writes %.1f)", pw, sc.Name, ip.WritesPerPod[actorProject]))
			worst = max(worst, pw)
		}
	}
	gated.Got = orNot(strings.Join(parts, ", "))
	if worst >= 0 {
		gated.Met = ptr(worst <= 3)
	}
	plain := target{Name: "this project's writes to each upgraded pod, without a gate", Want: "≤ 1", Got: "not measured"}
	for _, tp := range r.Throughput {
		if tp.Replicas == 1 && tp.Error == "" && tp.Unavailable == "" {
			pw := float64(podWrites(tp.ProjectRequests)) / float64(max(tp.Pods, 1))
			plain.Got = fmt.Sprintf("%.1f (%d pods, scale run; all writes %.1f)", pw, tp.Pods, tp.WritesPerPod[actorProject])
			plain.Met = ptr(pw <= 1)
		}
	}
	return []target{gated, plain}
}

// podWrites counts the patches and updates of pods (any subresource) in an
// actor's requests by "verb resource[/subresource]"; creating and deleting
// pre-pull pods is not a write to an upgraded pod.
func podWrites(detail map[string]int) int {
	n := 0
	for k, v := range detail {
		verb, res, _ := strings.Cut(k, " ")
		if (verb == "patch" || verb == "update") && (res == "pods" || strings.HasPrefix(res, "pods/")) {
			n += v
		}
	}
	return n
}

func (r *report) throughputTarget() target {
	t := target{Name: "pods upgraded per second at 1,000 pods", Want: "≥ 100"}
	var parts []string
	for _, n := range r.replicaCounts() {
		var rates []float64
		var last *throughput
		failed := 0
		for i, tp := range r.Throughput {
			switch {
			case tp.Replicas != n:
			case tp.Unavailable != "":
				parts = append(parts, fmt.Sprintf("%d replica(s): not available (%s)", tp.Replicas, tp.Unavailable))
			case tp.Error != "":
				failed++
			default:
				rates, last = append(rates, tp.PodsPerSec), &r.Throughput[i]
			}
		}
		if failed > 0 {
			parts = append(parts, fmt.Sprintf("%d replica(s): %d run(s) failed", n, failed))
		}
		if last == nil {
			continue
		}
		m := median(rates)
		s := fmt.Sprintf("%.1f with %d replica(s) per function (%d pods)", m, n, last.Pods)
		if len(rates) > 1 {
			s = fmt.Sprintf("%.1f with %d replica(s) per function (%d pods; median of %s)", m, n, last.Pods, joinFloats(rates, "%.1f"))
		}
		parts = append(parts, s)
		if n == 1 {
			t.Met = ptr(m >= 100)
			if !*t.Met {
				t.Where = whereTime(last.Phases)
			}
		}
	}
	t.Got = orNot(strings.Join(parts, "; "))
	return t
}

// replicaCounts are the replica counts of the scale runs, in the order
// first run.
func (r *report) replicaCounts() []int {
	var out []int
	for _, tp := range r.Throughput {
		if !slices.Contains(out, tp.Replicas) {
			out = append(out, tp.Replicas)
		}
	}
	return out
}

// scaleFloors are the scale run's floors, one a round (the one floor of an
// older report as round 0).
func (r *report) scaleFloors() []rollout {
	if len(r.Floors) > 0 || r.Floor == nil {
		return r.Floors
	}
	return []rollout{*r.Floor}
}

// roundFloor is the scale run's floor of round, nil when there is none.
func (r *report) roundFloor(round int) *rollout {
	for _, f := range r.scaleFloors() {
		if f.Round == round && f.Error == "" && f.Seconds > 0 {
			return &f
		}
	}
	return nil
}

// controlPlaneByProcess says each control-plane process's CPU per pod in
// cpu (a run's CPUMsPerPod), with floor's beside it when there is one:
// "etcd 1.8 (1.9), kube-apiserver 13.4 (12.1), ...", by name; "" when cpu
// has none (a report from before they were metered).
func controlPlaneByProcess(cpu map[string]float64, floor *rollout) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(cpu)) {
		name, ok := strings.CutPrefix(k, controlPlanePrefix)
		if !ok {
			continue
		}
		part := fmt.Sprintf("%s %.1f", name, cpu[k])
		if floor != nil {
			if v, ok := floor.CPUMsPerPod[k]; ok {
				part += fmt.Sprintf(" (%.1f)", v)
			}
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// scaleRound is a scale run and the floor of its round.
type scaleRound struct {
	run   throughput
	floor rollout
}

// scaleRounds pairs each successful scale run with n replicas with the
// successful floor of its round.
func (r *report) scaleRounds(n int) []scaleRound {
	var out []scaleRound
	for _, tp := range r.Throughput {
		if tp.Replicas != n || tp.Error != "" || tp.Unavailable != "" {
			continue
		}
		if f := r.roundFloor(tp.Round); f != nil {
			out = append(out, scaleRound{run: tp, floor: *f})
		}
	}
	return out
}

// median is the middle of xs (the mean of the two middle ones when even).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func joinFloats(xs []float64, format string) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf(format, x))
	}
	return strings.Join(parts, ", ")
}

func (r *report) latencyTarget() target {
	t := target{Name: "webhook → first patch, p50", Want: "< 100 ms", Got: "not measured"}
	if l := r.Latency; l != nil && l.Samples > 0 {
		t.Got = fmt.Sprintf("p50 %.0f ms, p99 %.0f ms (%d samples)", l.P50ms, l.P99ms, l.Samples)
		t.Met = ptr(l.P50ms < 100)
		if !*t.Met {
			t.Where = whereTime(l.Phases)
		}
	}
	return t
}

func (r *report) overheadTargets() []target {
	var out []target
	for _, sc := range r.Scenarios {
		if !sc.Floor {
			continue
		}
		t := target{Name: "overhead over the kubelet's floor, " + sc.Title, Want: "< 5%", Got: "not measured"}
		if ip, fl := r.find(sc.Name, inPlace), r.find(sc.Name, floorRun); ip != nil && fl != nil {
			o := ip.Seconds/fl.Seconds - 1
			t.Got, t.Met = fmt.Sprintf("%.1f%% (%.1fs over %.1fs)", 100*o, ip.Seconds, fl.Seconds), ptr(o < 0.05)
			if !*t.Met {
				t.Where = whereTime(ip.Phases)
			}
		}
		out = append(out, t)
	}
	// Issue 30 states the scale run's goal: under 25% over the floor.
	t := target{Name: "overhead over the kubelet's floor, scale run (1 replica per function)", Want: "< 25%", Got: "not measured"}
	var each []string
	var ratios []float64
	for _, rd := range r.scaleRounds(1) {
		o := rd.run.Seconds/rd.floor.Seconds - 1
		ratios = append(ratios, o)
		each = append(each, fmt.Sprintf("%.1f%% (%.1fs over %.1fs)", 100*o, rd.run.Seconds, rd.floor.Seconds))
	}
	if len(ratios) > 0 {
		m := median(ratios)
		t.Got, t.Met = fmt.Sprintf("%.1f%%", 100*m), ptr(m < 0.25)
		if len(ratios) > 1 {
			t.Got = fmt.Sprintf("median %.1f%% over %d rounds: %s", 100*m, len(ratios), strings.Join(each, ", "))
		} else {
			t.Got = each[0]
		}
	}
	return append(out, t)
}

func (r *report) memoryTarget() target {
	t := target{Name: "RSS of inplace run watching 10,000 pods", Want: "< 150 MiB", Got: "not measured"}
	var parts []string
	for _, m := range r.Memory {
		if m.Error != "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%.0f MiB at %d pods (peak %.0f)", m.RSSMiB, m.Pods, m.HWMMiB))
		if m.Pods >= 10000 {
			t.Met = ptr(m.RSSMiB < 150)
			if !*t.Met {
				t.Where = m.where()
			}
		}
	}
	t.Got = orNot(strings.Join(parts, "; "))
	return t
}

// whereTime names the largest phases of an in-place rollout.
func whereTime(ps []phase) string {
	var parts []string
	for _, p := range ps {
		s := fmt.Sprintf("%s %.1fs", p.Name, p.Seconds)
		if p.Note != "" {
			s += " (" + p.Note + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func orNot(s string) string {
	if s == "" {
		return "not measured"
	}
	return s
}
