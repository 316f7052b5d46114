package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
)

// putFleet stores a record of push-1: staging done, prod released with
// prod-eu halted and prod-us not reported.
func putFleet(t *testing.T, w *toolWorld) {
	t.Helper()
	web := "Deployment/shop/web"
	now := time.Now()
	r := fleet.NewRecord("push-1", "registry.example/shop/web:2.0.0", nil, fleet.Policy{Workloads: []string{web},
		Stages: []fleet.Stage{{Name: "staging", Clusters: []string{"staging"}},
			{Name: "prod", Clusters: []string{"prod-eu", "prod-us"}}}}, now.Add(-5*time.Minute))
	r.Released = map[string]time.Time{"staging": now, "prod": now}
	r.Sent = map[string]time.Time{"staging": now, "prod-eu": now, "prod-us": now}
	r.Members = map[string]fleet.Member{
		"staging": {Rollouts: map[string]fleet.Outcome{web: {State: fleet.Succeeded, Event: "a", At: now}}},
		"prod-eu": {Rollouts: map[string]fleet.Outcome{web: {State: fleet.Halted, Reason: "ImagePullBackOff", Event: "b", At: now}}},
	}
	kv, err := w.bus.JetStream().CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: defaultFleetBucket})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), "push-1", raw); err != nil {
		t.Fatal(err)
	}
}

func TestStatusFleet(t *testing.T) {
	w := newToolWorld(t)
	if _, _, err := w.run(t.Context(), t, "", "status", "--fleet"); err == nil || !strings.Contains(err.Error(), "fleet bucket inplace-fleet") {
		t.Fatalf("without a fleet bucket: %v", err)
	}
	putFleet(t, w)
	out, _, err := w.run(t.Context(), t, "", "status", "--fleet")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 5 {
		t.Fatalf("want a heading, a header and 3 clusters:\n%s", out)
	}
	u := events.DeriveUpgradeID("push-1", events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"})
	for i, want := range [][]string{
		{"push push-1", "registry.example/shop/web:2.0.0", "Halted in prod: RolloutHalted"},
		{"STAGE", "CLUSTER", "ROLLOUT", "UPGRADE"},
		{"staging", "Done", "staging", "Deployment/shop/web", "Succeeded", u},
		{"prod", "Halted", "prod-eu", "Halted", u, "ImagePullBackOff"},
		{"prod", "Halted", "prod-us", "InFlight", u},
	} {
		for _, part := range want {
			if !strings.Contains(rows[i], part) {
				t.Errorf("row %d lacks %q: %s", i, part, rows[i])
			}
		}
	}
	out, _, err = w.run(t.Context(), t, "", "status", "--fleet", "push-1", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var s fleet.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(s.Stages) != 2 || len(s.Stages[1].Clusters) != 2 || s.Halt == nil || s.Halt.Cluster != "prod-eu" {
		t.Errorf("json status: %+v", s)
	}
	if _, _, err := w.run(t.Context(), t, "", "status", "--fleet", "push-2"); err == nil || !strings.Contains(err.Error(), `push "push-2": no fleet record`) {
		t.Errorf("an unknown push: %v", err)
	}
}
