package e2e_test

import (
	"testing"
	"time"
)

// With the readiness gate in the template, each pod is NotReady from
// before its patch until verify opens the gate, and Ready after; and at
// no moment of a 20-pod rollout are more pods NotReady than max-unavailable.
func TestGatedRolloutStaysWithinBudget(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "2.0.0")
	e.deploy(workload{name: "gated", replicas: 20, image: e.ref("shop", "2.0.0"), gate: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "3",
			"inplace.dev/grace-seconds": "1"}})
	m := e.watchPods("gated")
	digest := e.push("shop", "2.1.0")
	e.waitAllOn("gated", 20, digest, 4*time.Minute)
	maxDown, images, early := m.results()
	if maxDown > 3 {
		t.Errorf("%d pods were NotReady at once; max-unavailable is 3", maxDown)
	}
	if maxDown == 0 {
		t.Error("no pod was ever NotReady: the readiness gate was not used")
	}
	if len(early) > 0 {
		t.Errorf("pods Ready on the new image before verify opened their gate: %v", early)
	}
	for name, h := range images {
		if len(h) != 2 {
			t.Errorf("pod %s went through images %v; want old then new", name, h)
		}
	}
	t.Logf("max NotReady at once: %d of 20 (budget 3)", maxDown)
}
