package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

func putRollout(t *testing.T, w *toolWorld, name string, phase rollout.Phase, updated time.Time, states ...rollout.PodState) {
	t.Helper()
	r := rollout.Rollout{
		UpgradeID: "u-" + name, Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: name},
		Push:  events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "registry.example", Repository: "shop/" + name, Tag: "1.3.0", Origin: "distribution"}},
		Phase: phase, Pods: map[string]*rollout.Pod{}, StartedAt: updated.Add(-5 * time.Minute), UpdatedAt: updated,
	}
	for i, s := range states {
		n := name + "-" + string(rune('0'+i))
		r.Pods[n] = &rollout.Pod{Name: n, State: s}
	}
	if phase == rollout.Halted {
		r.Reason, r.Message = "ImagePullBackOff", "shop/"+name+"-2: Back-off pulling image"
	}
	kv, err := w.bus.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Update(t.Context(), rollout.Key(r.Workload), func([]byte) ([]byte, error) { return raw, nil }); err != nil {
		t.Fatal(err)
	}
}

func TestStatus(t *testing.T) {
	w := newToolWorld(t)
	out, _, err := w.run(t.Context(), t, "", "status")
	if err != nil || !strings.Contains(out, "no rollout in flight") {
		t.Fatalf("before any rollout: %q, %v", out, err)
	}
	now := time.Now()
	s, f, r, ok := rollout.Succeeded, rollout.InFlight, rollout.RolledBack, rollout.Current
	putRollout(t, w, "web", rollout.Running, now, s, s, s, s, s, s, ok, f, rollout.Pending, rollout.Pending)
	putRollout(t, w, "cart", rollout.Halted, now.Add(-time.Minute), s, s, r)
	putRollout(t, w, "api", rollout.Completed, now.Add(-10*time.Minute), s, s)
	putRollout(t, w, "old", rollout.Completed, now.Add(-3*time.Hour), s)

	out, _, err = w.run(t.Context(), t, "", "status")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 4 || !strings.HasPrefix(rows[0], "WORKLOAD") {
		t.Fatalf("want a header and 3 rollouts:\n%s", out)
	}
	for i, want := range [][]string{
		{"Deployment/shop/web", "Running", "[#######---] 7/10", "u-web", "5m"},
		{"Deployment/shop/cart", "Halted", "[######----] 2/3", "ImagePullBackOff: shop/cart-2: Back-off pulling image"},
		{"Deployment/shop/api", "Completed", "[##########] 2/2"},
	} {
		for _, part := range want {
			if !strings.Contains(rows[i+1], part) {
				t.Errorf("row %d lacks %q: %s", i+1, part, rows[i+1])
			}
		}
	}
	// SUCCEEDED, IN-FLIGHT, FAILED, ROLLED-BACK of web and cart.
	if f := strings.Fields(rows[1]); f[4] != "6" || f[5] != "1" || f[6] != "0" || f[7] != "0" {
		t.Errorf("web counts %v", f[4:8])
	}
	if f := strings.Fields(rows[2]); f[4] != "2" || f[5] != "0" || f[6] != "0" || f[7] != "1" {
		t.Errorf("cart counts %v", f[4:8])
	}

	raw, _, err := w.run(t.Context(), t, "", "status", "--all", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var sums []history.Summary
	if err := json.Unmarshal([]byte(raw), &sums); err != nil {
		t.Fatal(err)
	}
	if len(sums) != 4 || sums[3].Workload != "Deployment/shop/old" || sums[0].InFlight != 1 {
		t.Errorf("--all -o json: %+v", sums)
	}
}
