package e2e_test

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// The template sync of a Deployment runs its steps back to back, each
// wait for the Deployment controller ended by the controller's next status
// in the watch: compute-spec never hands its work back to the bus to be
// tried again later (before: every step did, after a fixed 1-2 s).
func TestTemplateSyncFollowsTheWatch(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 2, image: e.ref("shop", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	before := e.settlements("compute-spec", "later")

	digest := e.push("shop", "1.1.0")
	e.waitAllOn("web", 2, digest, 3*time.Minute)
	done := e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
	r, err := events.As[events.RolloutData](done)
	if err != nil {
		t.Fatal(err)
	}
	if !r.TemplateSynced {
		t.Fatalf("rollout.completed: %+v; want the template synced", r)
	}
	if later := e.settlements("compute-spec", "later") - before; later != 0 {
		t.Errorf("compute-spec settled %v deliveries as \"later\" during the rollout; want none", later)
	}
}

// settlements reads the process's inplace_events_settled_total for function
// and outcome from its /metrics.
func (e *env) settlements(function, outcome string) float64 {
	e.t.Helper()
	resp, err := http.Get("http://" + e.s.HTTPAddr + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	want := `inplace_events_settled_total{function="` + function + `",outcome="` + outcome + `"} `
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), want); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				e.t.Fatal(err)
			}
			return f
		}
	}
	return 0
}
