package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is a report as a run would leave it: the cached Deployment met
// its target, the StatefulSet missed it, the uncached Deployment's in-place
// run failed, one scale run, the floor, latency and memory at 1,000 pods.
func sample() *report {
	r := &report{Scenarios: scenarios(options{deployPods: 8, stsPods: 4})}
	ph := []phase{{Name: "webhook → first pod planned", Seconds: 0.2}, {Name: "last verified → rollout.completed (template sync)", Seconds: 6}}
	r.Rollouts = []rollout{
		{Scenario: "deploy-cached", Run: inPlace, Pods: 8, Seconds: 9, Phases: ph, WritesPerPod: map[string]float64{actorProject: 3, actorKubelet: 4},
			Requests: map[string]map[string]int{actorProject: {"patch pods": 8, "patch pods/status": 16, "get pods": 40}}},
		{Scenario: "deploy-cached", Run: nativeSame, Pods: 8, Seconds: 12, WritesPerPod: map[string]float64{actorControllers: 2}},
		{Scenario: "deploy-cached", Run: nativeDefaults, Pods: 8, Seconds: 10},
		{Scenario: "deploy-cached", Run: floorRun, Pods: 8, Seconds: 8},
		{Scenario: "deploy-uncached", Run: inPlace, Pods: 8, Seconds: 3, Error: "rollout halted"},
		{Scenario: "deploy-uncached", Run: nativeSame, Pods: 8, Seconds: 30},
		{Scenario: "sts-pvc", Run: inPlace, Pods: 4, Seconds: 20, Phases: ph, WritesPerPod: map[string]float64{actorProject: 3.5},
			Requests:           map[string]map[string]int{actorProject: {"patch pods": 8, "patch pods/status": 8, "create pods": 4, "patch statefulsets": 2}},
			FailedWritesPerPod: map[string]float64{actorProject: 0.5}},
		{Scenario: "sts-pvc", Run: nativeSame, Pods: 4, Seconds: 40},
	}
	r.Throughput = []throughput{{Replicas: 1, Pods: 1000, Seconds: 20, PodsPerSec: 50, RequestsPerPod: 6,
		WritesPerPod: map[string]float64{actorProject: 1.2}, Phases: ph,
		ProjectRequests: map[string]int{"patch pods": 1000, "create pods": 3, "delete pods": 3, "patch deployments": 2}}}
	r.Floor = &rollout{Scenario: "scale", Run: floorRun, Pods: 1000, Seconds: 19}
	r.Latency = &latency{Samples: 20, P50ms: 40, P99ms: 250}
	r.Memory = []memoryResult{{Pods: 1000, RSSMiB: 60, HWMMiB: 70}, {Pods: 10000, Error: "context canceled"}}
	return r
}

func targetNamed(t *testing.T, ts []target, prefix string) target {
	t.Helper()
	for _, x := range ts {
		if strings.HasPrefix(x.Name, prefix) {
			return x
		}
	}
	t.Fatalf("no target %q in %+v", prefix, ts)
	return target{}
}

func met(x target) string {
	switch {
	case x.Met == nil:
		return "not measured"
	case *x.Met:
		return "met"
	}
	return "missed"
}

func TestTargets(t *testing.T) {
	ts := sample().targets()
	tests := []struct{ prefix, met, got string }{
		{"Deployment, image cached", "met", "0.75x (9.0s / 12.0s); vs native defaults 0.90x"},
		// The in-place run failed: its ratio is not a measurement.
		{"Deployment, image not on the nodes", "not measured", "not measured"},
		{"StatefulSet with a PVC", "missed", "0.50x (20.0s / 40.0s)"},
		// The worst scenario decides: 3.5 > 3.
		{"this project's writes to each upgraded pod, with", "missed", "3.0 (deploy-cached; all writes 3.0), 4.0 (sts-pvc; all writes 3.5)"},
		{"this project's writes to each upgraded pod, without", "met", "1.0 (1000 pods, scale run; all writes 1.2)"},
		{"pods upgraded per second", "missed", "50.0 with 1 replica(s) per function (1000 pods)"},
		{"webhook → first patch", "met", "p50 40 ms, p99 250 ms (20 samples)"},
		{"overhead over the kubelet's floor, Deployment, image cached", "missed", "12.5% (9.0s over 8.0s)"},
		// 20/19-1 is 5.3%: under issue 30's 25% (a report of one floor,
		// before the rounds).
		{"overhead over the kubelet's floor, scale run", "met", "5.3% (20.0s over 19.0s)"},
		// 10,000 pods failed: the target is not measured, 1,000 is shown.
		{"RSS of inplace run", "not measured", "60 MiB at 1000 pods (peak 70)"},
	}
	for _, tc := range tests {
		x := targetNamed(t, ts, tc.prefix)
		if met(x) != tc.met || x.Got != tc.got {
			t.Errorf("%s: %s, %q; want %s, %q", tc.prefix, met(x), x.Got, tc.met, tc.got)
		}
	}
	sts := targetNamed(t, ts, "StatefulSet with a PVC")
	if !strings.Contains(sts.Where, "last verified → rollout.completed (template sync) 6.0s") {
		t.Errorf("a missed target says where the time goes: %q", sts.Where)
	}
	if x := targetNamed(t, ts, "Deployment, image cached"); x.Where != "" {
		t.Errorf("a met target has no where: %q", x.Where)
	}
}

func TestMemoryTargetMissed(t *testing.T) {
	r := &report{Memory: []memoryResult{{Pods: 1000, RSSMiB: 80, HWMMiB: 80},
		{Pods: 10000, RSSMiB: 177, HWMMiB: 180, AnonMiB: 150, FileMiB: 27, FilesMiB: map[string]float64{"inplace": 26, "libc.so.6": 0.8}, Go: &goMemory{HeapInUseMiB: 120, HeapIdleMiB: 20, StackMiB: 3, HeapObjects: 900000}}}}
	r.Targets = r.targets()
	x := targetNamed(t, r.Targets, "RSS")
	if met(x) != "missed" || x.Got != "80 MiB at 1000 pods (peak 80); 177 MiB at 10000 pods (peak 180)" ||
		!strings.Contains(x.Where, "RssAnon 150 MiB, RssFile 27 MiB: inplace 26 MiB (clean") || !strings.Contains(x.Where, "Go heap in use 120 MiB") {
		t.Errorf("RSS 177 MiB at 10,000 pods: %s, %q, where %q", met(x), x.Got, x.Where)
	}
	var out bytes.Buffer
	r.print(&out)
	if !strings.Contains(out.String(), "where the memory goes (RSS") {
		t.Errorf("the table does not say where the memory goes:\n%s", out.String())
	}
}

func TestTargetsNothingMeasured(t *testing.T) {
	r := &report{Scenarios: scenarios(options{deployPods: 4, stsPods: 2})}
	for _, x := range r.targets() {
		if x.Met != nil || x.Got != "not measured" {
			t.Errorf("%s: %s, %q; want not measured", x.Name, met(x), x.Got)
		}
	}
}

func TestReplicasNotAvailable(t *testing.T) {
	r := sample()
	r.Throughput = append(r.Throughput, throughput{Replicas: 3, Pods: 1000, Unavailable: "several replicas per function are not on main"})
	x := targetNamed(t, r.targets(), "pods upgraded per second")
	if !strings.Contains(x.Got, "3 replica(s): not available (several replicas per function are not on main)") || met(x) != "missed" {
		t.Errorf("throughput with 3 replicas not available: %s, %q", met(x), x.Got)
	}
	var out bytes.Buffer
	r.print(&out)
	if !strings.Contains(out.String(), "not available") {
		t.Errorf("the table does not say 3 replicas are not available:\n%s", out.String())
	}
}

func TestPrint(t *testing.T) {
	r := sample()
	r.Targets = r.targets()
	r.Profiles = []profile{realistic()}
	r.Sources = sources
	var out bytes.Buffer
	r.print(&out)
	s := out.String()
	for _, want := range []string{
		// Each charged figure with its source.
		"volume attach + mount (PVC)", "kubernetes/kubernetes#62119",
		// In place against native at the same max-unavailable.
		"0.75x", "0.50x",
		// A failed run says so and why.
		"FAILED", "rollout halted",
		// Failed writes beside the writes.
		"3.5 (0.5 failed)",
		"p50 40 ms, p99 250 ms",
		"watching 1000 pods: VmRSS 60 MiB", "10000 pods: context canceled",
		"MISSED", "met", "where the time goes (StatefulSet with a PVC per pod",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the table lacks %q:\n%s", want, s)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	r := sample()
	r.Targets = r.targets()
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := r.write(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rollouts []struct {
			Scenario     string             `json:"scenario"`
			Seconds      float64            `json:"seconds"`
			WritesPerPod map[string]float64 `json:"writesPerPod"`
		} `json:"rollouts"`
		Targets []struct {
			Name string `json:"name"`
			Met  *bool  `json:"met"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rollouts) != len(r.Rollouts) || back.Rollouts[0].WritesPerPod[actorProject] != 3 || len(back.Targets) != len(r.Targets) {
		t.Errorf("JSON round trip: %+v", back)
	}
}

func TestDetail(t *testing.T) {
	got := detail(map[string]int{"get pods": 30, "patch pods": 10, "create events": 10}, 10)
	if want := "3.00 get pods, 1.00 create events, 1.00 patch pods"; got != want {
		t.Errorf("detail = %q, want %q", got, want)
	}
}

func TestMarkdown(t *testing.T) {
	r := sample()
	r.Throughput = append(r.Throughput, throughput{Replicas: 3, Pods: 1000, Unavailable: "not on main"})
	r.Targets, r.Profiles, r.Command = r.targets(), []profile{realistic()}, "go run ./test/bench"
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := r.write(path); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := markdownFrom(path, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"| deploy-cached | in place | 8 |  | 9.0 s | 0.75x | - | 3.0 | 4.0 |",
		"| deploy-uncached | in place | 8 |  | failed |  | - |",
		"| 3 replicas per function | | 1000 | not available: not on main |",
		"| 1 replica(s) per function |  | 1000 | 20.0 s | 50.0 | 6.0 | 1.2 |",
		"| StatefulSet with a PVC per pod: in place vs the native rolling update (same max-unavailable) | ≤ 0.25x | 0.50x (20.0s / 40.0s) | **missed** |",
		"| volume attach + mount (PVC) | 15s | kubernetes/kubernetes#62119",
		"p50 40 ms, p99 250 ms",
		// A list ends before the next table starts.
		"- deploy-uncached, in place failed: rollout halted\n\n|",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, s)
		}
	}
}

// The scale run in rounds: each ratio compares a run with the floor (or
// the one-replica run) of its own round, and the goals take the median.
func TestScaleRoundsTakeTheMedian(t *testing.T) {
	r := &report{}
	// Round 2's floor is slow (a stall): against it round 2's run looks
	// good, against round 1's floor it would look bad.
	for i, x := range []struct{ one, three, floor float64 }{{40, 50, 30}, {45, 40, 44}, {38, 60, 29}} {
		round := i + 1
		r.Throughput = append(r.Throughput,
			throughput{Replicas: 1, Round: round, Pods: 1000, Seconds: x.one, PodsPerSec: 1000 / x.one},
			throughput{Replicas: 3, Round: round, Pods: 1000, Seconds: x.three, PodsPerSec: 1000 / x.three})
		r.Floors = append(r.Floors, rollout{Scenario: "scale", Run: floorRun, Round: round, Pods: 1000, Seconds: x.floor})
	}
	// A failed run is left out, not counted as a round.
	r.Throughput = append(r.Throughput, throughput{Replicas: 1, Round: 4, Pods: 1000, Error: "rollout halted"})
	ts := r.targets()
	// Overheads 33.3%, 2.3%, 31.0%: the median is 31.0%.
	over := targetNamed(t, ts, "overhead over the kubelet's floor, scale run")
	if want := "median 31.0% over 3 rounds: 33.3% (40.0s over 30.0s), 2.3% (45.0s over 44.0s), 31.0% (38.0s over 29.0s)"; over.Got != want || met(over) != "missed" {
		t.Errorf("overhead: %s, %q; want missed, %q", met(over), over.Got, want)
	}
	// 3 replicas against 1 of the same round: 0.80x, 1.12x, 0.63x; median 0.80x.
	rep := targetNamed(t, ts, "3 replicas per function faster than 1")
	if !strings.HasPrefix(rep.Got, "median 0.80x over 3 rounds: 0.80x (20.0 vs 25.0 pods/s), 1.12x") || met(rep) != "missed" {
		t.Errorf("replicas: %s, %q", met(rep), rep.Got)
	}
	// Pods per second: the median of the one-replica runs, 25.0 of 25.0, 22.2, 26.3.
	tp := targetNamed(t, ts, "pods upgraded per second")
	if want := "25.0 with 1 replica(s) per function (1000 pods; median of 25.0, 22.2, 26.3); 1 replica(s): 1 run(s) failed"; !strings.Contains(tp.Got, "25.0 with 1 replica(s) per function (1000 pods; median of 25.0, 22.2, 26.3)") ||
		!strings.Contains(tp.Got, "1 replica(s): 1 run(s) failed") {
		t.Errorf("pods/s: %q; want %q", tp.Got, want)
	}
	r.Targets = ts
	var out bytes.Buffer
	r.markdownScale(&out)
	for _, want := range []string{
		"| 3 replica(s) per function | 1 | 1000 | 50.0 s | 20.0 |",
		"| floor (the kubelet alone) | 1 | 1000 | 30.0 s | 33.3 | | |\n| 1 replica(s) per function | 2 |",
		"| floor (the kubelet alone) | 3 | 1000 | 29.0 s |",
		"| 1 replica(s) per function | 4 | 1000 | failed: rollout halted |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the scale table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// The control plane's CPU by process reads each process's figure with its
// round's floor beside it, by name, and nothing from a report made before
// they were metered.
func TestControlPlaneByProcess(t *testing.T) {
	cpu := map[string]float64{"inplace": 4, "control plane": 19.2,
		controlPlanePrefix + "kube-apiserver": 13.4, controlPlanePrefix + "etcd": 1.8}
	floor := &rollout{CPUMsPerPod: map[string]float64{controlPlanePrefix + "kube-apiserver": 12.1}}
	if got, want := controlPlaneByProcess(cpu, floor), "etcd 1.8, kube-apiserver 13.4 (12.1)"; got != want {
		t.Errorf("with a floor: %q, want %q", got, want)
	}
	if got, want := controlPlaneByProcess(cpu, nil), "etcd 1.8, kube-apiserver 13.4"; got != want {
		t.Errorf("without a floor: %q, want %q", got, want)
	}
	if got := controlPlaneByProcess(map[string]float64{"control plane": 19.2}, floor); got != "" {
		t.Errorf("an older report: %q, want nothing", got)
	}
}
