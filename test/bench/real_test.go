package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// realSample is a report with the real-node rows of one run: the mesh
// pod in place faster than both native runs, with no failed request in
// place and two refused in the native run at the same max-unavailable.
func realSample() *report {
	r := &report{Scenarios: realScenarios(options{realPods: 4}), RealNodes: describeReal()}
	tr := func(failed, refused int64) *trafficCounts {
		return &trafficCounts{Sent: 500, OK: 500 - failed, Failed: failed, Refused: refused}
	}
	r.Rollouts = []rollout{
		{Scenario: "real-mesh", Run: inPlace, Pods: 4, Seconds: 6, Traffic: tr(0, 0)},
		{Scenario: "real-mesh", Run: nativeSame, Pods: 4, Seconds: 12, Traffic: tr(2, 2)},
		{Scenario: "real-mesh", Run: nativeDefaults, Pods: 4, Seconds: 8, Traffic: tr(0, 0)},
		{Scenario: "real-mesh", Run: floorRun, Pods: 4, Seconds: 5, Traffic: tr(0, 0)},
	}
	return r
}

func TestRealTargets(t *testing.T) {
	r := realSample()
	ts := r.targets()
	got := map[string]string{}
	for _, prefix := range []string{
		"Real nodes, app + sidecar + init container, image cached: in place vs the native rolling update (same",
		"Real nodes, app + sidecar + init container, image cached: in place vs the native rolling update (its defaults)",
		"Real nodes, app + sidecar + init container, image cached: failed requests",
		"Real nodes, one-container app, image cached: failed requests",
	} {
		x := targetNamed(t, ts, prefix)
		got[prefix[len("Real nodes, "):]] = x.Got + " → " + met(x)
	}
	want := map[string]string{
		"app + sidecar + init container, image cached: in place vs the native rolling update (same":          "0.50x (6.0s / 12.0s); vs native defaults 0.75x → met",
		"app + sidecar + init container, image cached: in place vs the native rolling update (its defaults)": "0.75x (6.0s / 8.0s) → met",
		"app + sidecar + init container, image cached: failed requests": "in place 0 of 500; native, same max-unavailable 2 of 500 (2 refused, 0 reset, 0 timeout, 0 5xx); " +
			"native, defaults 0 of 500; floor (kubelet alone) 0 of 500 → met",
		"one-container app, image cached: failed requests": "not measured → not measured",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
}

func TestRealRowsInMarkdown(t *testing.T) {
	r := realSample()
	r.Targets = r.targets()
	var out bytes.Buffer
	r.markdown(&out)
	for _, want := range []string{
		"real-*: 2 real nodes (kubelet v1.35.4",
		"| real-mesh | native, same max-unavailable | 4 |  | 12.0 s | 1.00x | 2 of 500 (2 refused, 0 reset, 0 timeout, 0 5xx) |",
		"| real-mesh | in place | 4 |  | 6.0 s | 0.50x | 0 of 500 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, out.String())
		}
	}
	r = &report{RealUnavailable: "real nodes need root"}
	r.Rollouts = []rollout{{Scenario: "deploy-cached", Run: inPlace, Pods: 1, Seconds: 1}}
	out.Reset()
	r.markdown(&out)
	if !strings.Contains(out.String(), "No real-node rows: real nodes need root.") {
		t.Errorf("the Markdown does not say why there are no real rows:\n%s", out.String())
	}
}

// TestRealLast: the real part runs first, its rows are printed after the
// simulated ones.
func TestRealLast(t *testing.T) {
	r := realSample()
	r.Scenarios = append(r.Scenarios, scenarios(options{deployPods: 4, stsPods: 2})...)
	r.Rollouts = append(r.Rollouts, rollout{Scenario: "deploy-cached", Run: inPlace}, rollout{Scenario: "sts-pvc", Run: inPlace})
	r.realLast()
	var got []string
	for _, x := range r.Rollouts {
		got = append(got, x.Scenario+"/"+string(x.Run))
	}
	want := []string{"deploy-cached/in place", "sts-pvc/in place", "real-mesh/in place", "real-mesh/native, same max-unavailable",
		"real-mesh/native, defaults", "real-mesh/floor (kubelet alone)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rollouts (-want +got):\n%s", d)
	}
	if r.Scenarios[0].Name != "deploy-cached" || r.Scenarios[len(r.Scenarios)-1].Nodes != realNodes {
		t.Errorf("scenarios not real-last: %v", r.Scenarios)
	}
}

// TestGoalBelowTheFloor: a missed goal that even the floor run misses
// says so with the figures; one the floor meets does not.
func TestGoalBelowTheFloor(t *testing.T) {
	r := realSample()
	r.Rollouts = append(r.Rollouts,
		rollout{Scenario: "real-app", Run: inPlace, Pods: 4, Seconds: 16, Shares: map[string]float64{actorKubelet: 12, actorProject: 2}},
		rollout{Scenario: "real-app", Run: nativeSame, Pods: 4, Seconds: 8},
		rollout{Scenario: "real-app", Run: floorRun, Pods: 4, Seconds: 14})
	ts := r.targets()
	app := targetNamed(t, ts, "Real nodes, one-container app, image cached: in place vs the native rolling update (same")
	for _, want := range []string{
		"the goal is below the kubelet's floor: an ideal in-place controller (the kubelet alone) took 14.0s, 1.75x the native 8.0s, " +
			"against the goal of 1.00x; in place took 16.0s, +2.0s over that floor; ",
		"; by who was waited for (timeline): kubelet 12.0 s, inplace 2.0 s",
	} {
		if !strings.Contains(app.Where, want) {
			t.Errorf("where the time goes: want %q in\n%s", want, app.Where)
		}
	}
	r.Rollouts[0].Seconds = 9 // real-mesh in place 0.75x: missed, its floor (5s, 0.42x) is not
	mesh := targetNamed(t, r.targets(), "Real nodes, app + sidecar + init container, image cached: in place vs the native rolling update (same")
	if strings.Contains(mesh.Where, "floor") {
		t.Errorf("a goal the floor meets is not below it: %s", mesh.Where)
	}
}
