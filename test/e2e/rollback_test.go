package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// checkRolledBack: every pod runs its previous image again and is Ready,
// the rollout halted, and no more than budget pods were ever touched.
func (e *env) checkRolledBack(app string, before map[string]podInfo, budget int, wantReason string) {
	e.t.Helper()
	halted := e.waitEvent(events.RolloutHalted, "/"+app, 3*time.Minute)
	d, err := events.As[events.RolloutData](halted)
	if err != nil {
		e.t.Fatal(err)
	}
	if d.Counts.RolledBack == 0 || !strings.Contains(d.Reason+d.Message, wantReason) {
		e.t.Errorf("rollout.halted: %+v; want a rollback for %s", d, wantReason)
	}
	rb := e.waitEvent(events.UpgradeRolledBack, e.ns+"/", time.Minute)
	o, _ := events.As[events.OutcomeData](rb)
	if o.Reason != wantReason || o.Message == "" {
		e.t.Errorf("upgrade.rolledback reason %q message %q; want %s with the kubelet's message", o.Reason, o.Message, wantReason)
	}
	var touched int
	for name, b := range before {
		err := world.Eventually(e.t.Context(), time.Minute, "pod "+name+" back on its image and Ready", func(context.Context) (bool, error) {
			a := e.pods(app)[name]
			return a.UID == b.UID && a.Image == b.Image && a.Ready && a.ImageID == b.ImageID, nil
		})
		if err != nil {
			e.t.Error(err)
		}
	}
	for _, ev := range e.stream(events.PodPatched) {
		if strings.HasPrefix(ev.Subject(), e.ns+"/") {
			touched++
		}
	}
	if touched == 0 || touched > budget {
		e.t.Errorf("%d pods were patched; want between 1 and max-unavailable %d", touched, budget)
	}
	e.t.Logf("halted: %s: %s (pods patched: %d)", d.Reason, d.Message, touched)
}

// A crash-looping image: verify rolls the pod back, the rollout halts.
func TestCrashLoopingImageIsRolledBack(t *testing.T) {
	e := newEnv(t)
	e.push("api", "1.0.0")
	// The crashing container is briefly Ready: minReadySeconds makes verify
	// wait long enough to see it crash, as it makes a Deployment rollout.
	e.deploy(workload{name: "api", replicas: 4, image: e.ref("api", "1.0.0"), minReady: 3,
		annotations: map[string]string{"inplace.dev/policy": "semver:patch", "inplace.dev/max-unavailable": "2"}})
	before := e.pods("api")
	e.push("api", "1.0.1", registry.WithCrash())
	e.checkRolledBack("api", before, 2, "CrashLoopBackOff")
}

// Pre-pull off and the image gone from the registry: the kubelet cannot
// pull it; verify rolls back, the rollout halts.
func TestMissingImageIsRolledBack(t *testing.T) {
	e := newEnv(t)
	e.push("api", "1.0.0")
	e.deploy(workload{name: "api", replicas: 3, image: e.ref("api", "1.0.0"), gate: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:patch", "inplace.dev/prepull": "false"}})
	before := e.pods("api")
	// Announce a push whose bytes the registry does not have (a webhook
	// delivered, then the manifest deleted).
	digest := e.push("api", "1.0.2")
	if err := e.w.Registry.Delete(t.Context(), e.ns+"/api", digest); err != nil {
		t.Fatal(err)
	}
	e.checkRolledBack("api", before, 1, "ImagePullBackOff")
}
