package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestKubeletLine(t *testing.T) {
	pods := map[string]bool{"app-1": true}
	at := func(s string) time.Time {
		x, err := time.ParseInLocation("2006-01-02 15:04:05.000000", "2026-"+s, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	cases := []struct {
		line string
		want []moment
	}{
		{`I1127 15:22:09.123456    4242 kubelet.go:2595] "SyncLoop UPDATE" source="api" pods=["ns/app-1","ns/other"]`,
			[]moment{{At: at("11-27 15:22:09.123456"), Pod: "app-1", Actor: actorKubelet, What: "update received"}}},
		{`I1127 15:22:10.000001    4242 kubelet.go:2619] "SyncLoop (PLEG): event for pod" pod="ns/app-1" event={"ID":"u","Type":"ContainerStarted","Data":"0123456789abcdef"}`,
			[]moment{{At: at("11-27 15:22:10.000001"), Pod: "app-1", Actor: actorKubelet, What: "PLEG ContainerStarted 012345"}}},
		{`I1127 15:22:11.500000    4242 kuberuntime_container.go:890] "Killing container with a grace period" pod="ns/app-1" podUID="u" containerName="app" containerID="containerd://ab" gracePeriod=30`,
			[]moment{{At: at("11-27 15:22:11.500000"), Pod: "app-1", Actor: actorKubelet, What: "stopping app (preStop done; SIGTERM, grace 30 s)"}}},
		{`I1127 15:22:12.000000    4242 kubelet.go:2707] "SyncLoop (probe)" probe="readiness" status="ready" pod="ns/app-1"`,
			[]moment{{At: at("11-27 15:22:12.000000"), Pod: "app-1", Actor: actorKubelet, What: "readiness probe ready"}}},
		{`I1127 15:22:12.000000    4242 kubelet.go:2707] "SyncLoop (probe)" probe="readiness" status="ready" pod="other/app-1"`, nil},
		{`I1127 15:22:12.000000    4242 kubelet.go:1] "Something else" pod="ns/app-1"`, nil},
		{`not klog`, nil},
	}
	for _, c := range cases {
		if d := cmp.Diff(c.want, kubeletLine(c.line, "ns", pods, 2026)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.line, d)
		}
	}
}

// TestSharesAndOnePod: each stretch goes to the actor waited for; the
// second pod's moments run from its first write to the next pod's.
func TestSharesAndOnePod(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	m := func(ms int, pod, actor, what string) moment {
		return moment{At: t0.Add(time.Duration(ms) * time.Millisecond), Pod: pod, Actor: actor, What: what}
	}
	ms := []moment{
		m(0, "a", actorProject, "patch status"),
		m(100, "a", "api", "gate False"),
		m(200, "a", actorKubelet, "Ready False"),
		m(300, "a", actorEndpoints, "ready=false"),
		m(400, "a", actorProject, "patch"),
		m(1400, "a", actorKubelet, "Ready True"),
		m(1600, "b", actorProject, "patch status"),
		m(1700, "b", actorKubelet, "Ready False"),
		m(2000, "c", actorProject, "patch status"),
	}
	want := map[string]time.Duration{actorProject: 600 * time.Millisecond, actorKubelet: 1300 * time.Millisecond, actorEndpoints: 100 * time.Millisecond}
	if d := cmp.Diff(want, shares(ms)); d != "" {
		t.Errorf("shares (-want +got):\n%s", d)
	}
	if d := cmp.Diff(ms[6:8], onePod(ms)); d != "" {
		t.Errorf("one pod (-want +got):\n%s", d)
	}
	native := []moment{
		m(0, "old-1", actorControllers, "delete"),
		m(10, "new-1", "api", "pod exists"),
		m(900, "new-1", actorKubelet, "Ready True"),
		m(1000, "old-2", actorControllers, "delete"),
		m(1010, "new-2", "api", "pod exists"),
		m(1020, "new-2", actorScheduler, "create binding"),
		m(1500, "old-2", actorKubelet, "stopping app"),
		m(1900, "new-2", actorKubelet, "Ready True"),
		m(2000, "old-3", actorControllers, "delete"),
	}
	if d := cmp.Diff(native[3:8], onePod(native)); d != "" {
		t.Errorf("one pod of a native rollout (-want +got):\n%s", d)
	}
}
