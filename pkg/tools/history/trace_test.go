package history

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history/historytest"
)

// pathShape is what a test checks of a pod path.
type pathShape struct {
	Pod, Node, Outcome, Reason string
	Wave                       int
	Took                       time.Duration
	Types                      []string
}

func shapes(t Trace) []pathShape {
	var out []pathShape
	for _, p := range t.Pods {
		s := pathShape{Pod: p.Pod, Node: p.Node, Outcome: p.Outcome, Reason: p.Reason, Wave: p.Wave, Took: p.Took}
		for _, st := range p.Steps {
			s.Types = append(s.Types, st.Type)
		}
		out = append(out, s)
	}
	return out
}

func TestBuildGroupsPerPod(t *testing.T) {
	r := haltedRollout()
	tr := Build(r.UpgradeID(), records(chainEvents(t, r)))
	ok := []string{"upgrade.planned", "image.prepulled", "pod.patched", "pod.updated", "container.restarted", "upgrade.succeeded"}
	want := []pathShape{
		{Pod: "shop/web-0", Node: "node-1", Outcome: "succeeded", Wave: 1, Took: 2 * time.Second, Types: ok},
		{Pod: "shop/web-1", Node: "node-2", Outcome: "succeeded", Wave: 1, Took: 2500 * time.Millisecond, Types: ok},
		{Pod: "shop/web-2", Node: "node-1", Outcome: "rolledback", Reason: "ImagePullBackOff", Wave: 2, Took: time.Second,
			Types: []string{"upgrade.planned", "image.prepulled", "pod.patched", "pod.updated", "upgrade.rolledback"}},
	}
	if diff := cmp.Diff(want, shapes(tr)); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	if tr.Push == nil || tr.Push.Type != "image.pushed" {
		t.Errorf("push = %+v", tr.Push)
	}
	if len(tr.Rollout) != 1 || tr.Rollout[0].Type != "rollout.halted" || tr.State != "halted" {
		t.Errorf("rollout steps %+v, state %q", tr.Rollout, tr.State)
	}
	if tr.Workload != "Deployment/shop/web" || tr.Target != r.Push.Ref() {
		t.Errorf("workload %q target %q", tr.Workload, tr.Target)
	}
	if got := tr.End.Sub(tr.Start); got != 18*r.Step {
		t.Errorf("trace spans %s; want %s", got, 18*r.Step)
	}
	// web-2's prepull is 250ms after its plan.
	if got := tr.Pods[2].Steps[1].After; got != r.Step {
		t.Errorf("step after = %s; want %s", got, r.Step)
	}
}

func TestBuildPlacesDeadLettersWithTheirPod(t *testing.T) {
	r := haltedRollout()
	recs := records(chainEvents(t, r))
	dead := recs[5] // web-0's pod.patched, dead-lettered by verify
	dead.Seq = 100
	dead.Stored = dead.Stored.Add(time.Minute)
	dead.Dead = &DeadLetter{Function: "verify", Reason: "pod has no state"}
	tr := Build(r.UpgradeID(), append(recs, dead))
	steps := tr.Pods[0].Steps
	last := steps[len(steps)-1]
	if last.Dead == nil || last.Detail != "dead-lettered by verify: pod has no state" {
		t.Errorf("last step of web-0 = %+v; want the dead letter", last)
	}
	if tr.Pods[0].Outcome != events.OutcomeSucceeded {
		t.Errorf("a dead letter changed the outcome to %q", tr.Pods[0].Outcome)
	}
}

func TestBuildInFlight(t *testing.T) {
	r := haltedRollout()
	evs := chainEvents(t, r)
	tr := Build(r.UpgradeID(), records(evs[:8])) // wave 1 patched, web-0 updated
	if tr.State != "" || tr.Pods[0].Outcome != "" || len(tr.Rollout) != 0 {
		t.Errorf("an unfinished rollout shows state %q, pod outcome %q", tr.State, tr.Pods[0].Outcome)
	}
	var b bytes.Buffer
	if err := WriteTree(&b, tr, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden(t, "inflight_tree_want.txt", b.String())
}

func TestTraceOutputs(t *testing.T) {
	r := haltedRollout()
	tr := Build(r.UpgradeID(), records(chainEvents(t, r)))
	var tree, table bytes.Buffer
	if err := WriteTree(&tree, tr, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden(t, "halted_tree_want.txt", tree.String())
	if err := WriteTable(&table, tr, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden(t, "halted_table_want.txt", table.String())
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var back Trace
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Pods[2].TookMillis != 1000 || back.Pods[2].Steps[1].AfterMillis != 250 || back.Pods[2].Message == "" {
		t.Errorf("JSON lost timings or the kubelet message: %+v", back.Pods[2])
	}
}

// One push starts rollouts of two workloads; another push is unrelated.
func TestCollectorFindsItsPush(t *testing.T) {
	web := haltedRollout()
	api := web
	api.Workload = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}
	api.Pods = []historytest.Pod{{Name: "api-0", UID: "uid-a0", Node: "node-3", Wave: 1}}
	other := web
	other.Push.Tag, other.Push.Digest = "1.4.0", ""
	var evs = chainEvents(t, other)
	evs = append(evs, chainEvents(t, web)...)
	evs = append(evs, chainEvents(t, api)[1:]...) // the same push is stored once
	c := NewCollector(web.UpgradeID())
	for _, r := range records(evs) {
		if err := c.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	got := c.Records()
	webEvents := chainEvents(t, web)
	if len(got) != len(webEvents) {
		t.Fatalf("collected %d records; want %d", len(got), len(webEvents))
	}
	for i, r := range got {
		if r.Event.ID() != webEvents[i].ID() {
			t.Errorf("record %d is %s %s; want %s", i, r.Event.Type(), r.Event.ID(), webEvents[i].Type())
		}
	}
	if NewCollector("u-none").Records() != nil {
		t.Error("an unknown upgrade collected records")
	}
}
