package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
)

// putGated stores a record of push whose prod stage asks for an approval
// and waits for it: staging released and done.
func putGated(t *testing.T, w *toolWorld, push string) {
	t.Helper()
	web := "Deployment/shop/web"
	now := time.Now()
	r := fleet.NewRecord(push, "registry.example/shop/web:2.0.0", nil, fleet.Policy{Workloads: []string{web},
		Stages: []fleet.Stage{{Name: "staging", Clusters: []string{"staging"}},
			{Name: "prod", Clusters: []string{"prod-eu", "prod-us"}, Approval: true}}}, now.Add(-time.Minute))
	r.Released = map[string]time.Time{"staging": now.Add(-50 * time.Second)}
	r.Sent = map[string]time.Time{"staging": now.Add(-50 * time.Second)}
	r.Members = map[string]fleet.Member{
		"staging": {Rollouts: map[string]fleet.Outcome{web: {State: fleet.Succeeded, Event: "a", At: now}}}}
	kv, err := w.bus.JetStream().CreateOrUpdateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: defaultFleetBucket})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), push, raw); err != nil {
		t.Fatal(err)
	}
}

func getFleet(t *testing.T, w *toolWorld, push string) fleet.Record {
	t.Helper()
	kv, err := w.bus.JetStream().KeyValue(t.Context(), defaultFleetBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(t.Context(), push)
	if err != nil {
		t.Fatal(err)
	}
	var r fleet.Record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFleetApproveAndReject: status --fleet shows the stage awaiting
// approval with its clusters not sent yet; approve records the verdict
// in the hub's bucket (the stage then starts), reject halts the fleet
// there; a stage that asks for no approval, a decided stage, an unknown
// push are refused with the reason.
func TestFleetApproveAndReject(t *testing.T) {
	w := newToolWorld(t)
	putGated(t, w, "push-a")
	putGated(t, w, "push-r")
	out, _, err := w.run(t.Context(), t, "", "status", "--fleet", "push-a")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"prod-eu", "prod-us", "AwaitingApproval", "NotSent"} {
		if !strings.Contains(out, want) {
			t.Errorf("status --fleet lacks %q:\n%s", want, out)
		}
	}

	out, _, err = w.run(t.Context(), t, "", "fleet", "approve", "push-a", "prod", "--by", "alice")
	if err != nil || !strings.Contains(out, "push push-a stage prod: approved by alice") {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	r := getFleet(t, w, "push-a")
	if g := r.Approved["prod"]; g.Verdict != fleet.Pass || g.By != "alice" {
		t.Errorf("approved: %+v", r.Approved)
	}
	if got := fleet.Decide(&r).Stages[1].State; got != fleet.Starting {
		t.Errorf("prod after the approval: %s, want Starting", got)
	}

	if _, _, err = w.run(t.Context(), t, "", "fleet", "reject", "push-r", "prod", "--by", "bob"); err != nil {
		t.Fatal(err)
	}
	out, _, err = w.run(t.Context(), t, "", "status", "--fleet", "push-r")
	if err != nil || !strings.Contains(out, "Halted in prod: ApprovalRejected") {
		t.Errorf("status after a rejection: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet", "approve", "push-a", "staging"}, `stage "staging": its policy asks for no approval`},
		{[]string{"fleet", "reject", "push-a", "prod"}, `stage "prod": Passed already (by alice)`},
		{[]string{"fleet", "approve", "push-r", "prod"}, `stage "prod": Failed already (by bob)`},
		{[]string{"fleet", "approve", "push-x", "prod"}, `push "push-x": no fleet record`},
		{[]string{"fleet", "approve", "push-a"}, "accepts 2 arg(s)"},
	} {
		if _, _, err := w.run(t.Context(), t, "", tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestTraceFleet: trace --fleet shows the push's steps from the hub's
// record and every report of its rollouts on the FLEET stream, in time
// order, with the cluster; a report of another push is left out.
func TestTraceFleet(t *testing.T) {
	w := newToolWorld(t)
	putFleet(t, w) // push-1: staging done, prod-eu halted, prod-us not reported
	js := w.bus.JetStream()
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: fleetnet.HubStream, Subjects: []string{fleetnet.AllRollouts}}); err != nil {
		t.Fatal(err)
	}
	web := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	u := events.DeriveUpgradeID("push-1", web)
	now := time.Now()
	report := func(cluster, id, typ, upgrade string, at time.Time, d events.RolloutData) {
		t.Helper()
		d.UpgradeID, d.Workload, d.Target = upgrade, web, "registry.example/shop/web:2.0.0"
		e, err := events.New(id, typ, events.Source("compute-spec"), web.String(), d)
		if err != nil {
			t.Fatal(err)
		}
		e.SetTime(at)
		m, err := bus.Encode(t.Context(), fleetnet.RolloutSubject(cluster, events.Short(typ)), e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	report("prod-eu", "eu-1", events.RolloutHalted, u, now.Add(-time.Second), events.RolloutData{Reason: "ImagePullBackOff",
		Counts: events.Counts{Pods: 2, Failed: 1}})
	report("staging", "st-1", events.RolloutCompleted, u, now.Add(-time.Minute), events.RolloutData{Counts: events.Counts{Pods: 2, Succeeded: 2}})
	report("staging", "other", events.RolloutCompleted, events.DeriveUpgradeID("push-0", web), now, events.RolloutData{})

	out, _, err := w.run(t.Context(), t, "", "trace", "--fleet", "push-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trace --fleet:\n%s", out)
	if !strings.Contains(out, "rollout.completed") || !strings.Contains(out, "Deployment/shop/web "+u+" 2/2 succeeded") ||
		!strings.Contains(out, "rollout.halted") || !strings.Contains(out, "ImagePullBackOff") || strings.Contains(out, "other") {
		t.Errorf("trace --fleet:\n%s", out)
	}
	if i, j := strings.Index(out, "staging  rollout.completed"), strings.Index(out, "prod-eu  rollout.halted"); i < 0 || j < i {
		t.Errorf("want staging's completion before prod-eu's halt:\n%s", out)
	}
	out, _, err = w.run(t.Context(), t, "", "trace", "--fleet", "push-1", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var tr FleetTrace
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(tr.Reports) != 2 || tr.Reports[0].Cluster != "staging" || tr.Reports[1].Cluster != "prod-eu" || len(tr.Status.Stages) != 2 {
		t.Errorf("json trace: %+v", tr)
	}
	if _, _, err := w.run(t.Context(), t, "", "trace", "--fleet", "push-9"); err == nil || !strings.Contains(err.Error(), `push "push-9": no fleet record`) {
		t.Errorf("an unknown push: %v", err)
	}
}
