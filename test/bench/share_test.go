package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReplicaShareFromMetrics(t *testing.T) {
	read := func(text string) replicaShare {
		s := newShare(0)
		if err := s.parse(strings.NewReader(text)); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := read(`# HELP inplace_events_received_total Input events delivered to a function, by event type.
inplace_events_received_total{function="verify",type="pod.patched"} 10
inplace_events_settled_total{function="verify",outcome="later"} 1
process_cpu_seconds_total 2.5
`)
	after := read(`inplace_events_received_total{function="verify",type="pod.patched"} 110
inplace_events_received_total{function="verify",type="pod.updated"} 50
inplace_events_received_total{function="compute-spec",type="upgrade.succeeded"} 100
inplace_events_settled_total{function="verify",outcome="ack"} 150
inplace_events_settled_total{function="verify",outcome="later"} 21
inplace_events_settled_total{function="verify",outcome="retry"} 3
inplace_events_published_total{function="verify",type="upgrade.succeeded"} 104
inplace_events_duplicate_total{function="verify",type="upgrade.succeeded"} 4
inplace_pod_watcher_published_total{type="pod.updated"} 150
inplace_pod_watcher_duplicate_total{type="pod.updated"} 100
inplace_record_conflicts_total 7
inplace_record_writes_total 40
process_cpu_seconds_total 12.5
`)
	got := sharesSince([]replicaShare{before}, []replicaShare{after})
	want := []replicaShare{{Received: map[string]float64{"verify": 150, "compute-spec": 100},
		Later: map[string]float64{"verify": 20}, Retried: map[string]float64{"verify": 3}, CPUSeconds: 10, Conflicts: 7, Writes: 40,
		Delivered:  map[string]float64{"pod.patched": 100, "pod.updated": 50, "upgrade.succeeded": 100},
		Published:  map[string]float64{"pod.updated": 150, "upgrade.succeeded": 104},
		Duplicates: map[string]float64{"pod.updated": 100, "upgrade.succeeded": 4}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
	if line, wantLine := got[0].String(), "#0: CPU 10.0 s; record writes 40, that lost the compare-and-swap 7; inputs: compute-spec 100, verify 150 (not yet 20, failed 3)"; line != wantLine {
		t.Errorf("line = %q, want %q", line, wantLine)
	}
	wantMsgs := "2.5 in, 2.5 out: pod.patched in 1.00, out 0.00; pod.updated in 0.50, out 1.50 (1.00 duplicates); " +
		"upgrade.succeeded in 1.00, out 1.04 (0.04 duplicates)"
	if msgs := messagesPerPod(got, 100); msgs != wantMsgs {
		t.Errorf("messages per pod = %q, want %q", msgs, wantMsgs)
	}
}

func TestMachineBusyIsAFraction(t *testing.T) {
	busy, total := machineTicks()
	if total == 0 {
		t.Fatal("no CPU times in /proc/stat")
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); { // burn CPU
	}
	if got := busySince(busy, total); got <= 0 || got > 1 {
		t.Errorf("busy = %v, want a fraction above 0 after 50 ms of work", got)
	}
}

func TestReplicasTargetSaysWhereTheCPUWent(t *testing.T) {
	r := report{Throughput: []throughput{
		{Replicas: 1, PodsPerSec: 28.5, MachineBusy: 0.94, Shares: []replicaShare{{CPUSeconds: 20.5}}},
		{Replicas: 3, PodsPerSec: 19.2, MachineBusy: 1, Shares: []replicaShare{{CPUSeconds: 25.2}, {Replica: 1, CPUSeconds: 12.8}, {CPUSeconds: 12.2}}},
	}}
	got := r.replicasTarget()
	want := []target{{Name: "3 replicas per function faster than 1 (scale run)", Want: "> 1x", Got: "0.67x (19.2 vs 28.5 pods/s)", Met: ptr(false),
		Where: "the machine's CPUs were 94% busy with 1 replica and 100% with 3; the 3 replicas spent 50.2 s of CPU (25.2 + 12.8 + 12.2) where 1 spent 20.5 s on the same rollout"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
}
