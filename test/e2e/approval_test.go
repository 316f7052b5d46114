package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/world"
)

// bus is the connection flags of the tools that only talk to NATS.
func (e *env) bus() []string {
	return []string{"--nats-url", e.s.NATSURL, "--nats-credentials", e.s.Credentials}
}

// A new major under inplace.dev/approval: major waits: nothing is planned,
// inplace status and an Event on the Deployment say why and how to go on;
// `inplace approve` (as the approver identity) lets it roll out.
func TestMajorWaitsForApproval(t *testing.T) {
	e := newEnv(t)
	e.push("gated", "1.4.0")
	e.deploy(workload{name: "gated", replicas: 2, image: e.ref("gated", "1.4.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:major", "inplace.dev/approval": "major",
			"inplace.dev/max-unavailable": "2"}})
	before := e.pods("gated")
	d2 := e.push("gated", "2.0.0")
	req := e.waitEvent(events.UpgradeApprovalRequested, "/gated", time.Minute)
	upgradeID := events.UpgradeID(req)
	e.settled(time.Minute)
	if n := len(e.stream(events.UpgradePlanned)); n != 0 {
		t.Fatalf("%d pods planned before any approval", n)
	}
	for name, p := range e.pods("gated") {
		if p.ImageID != before[name].ImageID || p.RestartCount != before[name].RestartCount {
			t.Errorf("pod %s changed before approval: %+v", name, p)
		}
	}
	out, err := e.inplace(append([]string{"status"}, e.bus()...)...)
	if err != nil || !strings.Contains(out, "AwaitingApproval") || !strings.Contains(out, "inplace approve "+upgradeID) {
		t.Errorf("inplace status: %v\n%s", err, out)
	}
	e.waitK8sEvent("gated", "InPlaceApprovalRequired", upgradeID)

	out, err = e.inplace(append([]string{"approve", upgradeID, "--by", "release-manager", "--reason", "2.0 signed off"}, e.bus()...)...)
	if err != nil || !strings.Contains(out, "approved") {
		t.Fatalf("inplace approve: %v\n%s", err, out)
	}
	e.waitAllOn("gated", 2, d2, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/gated", time.Minute)
	e.waitK8sEvent("gated", "InPlaceApproved", "release-manager")
	out, err = e.inplace(append([]string{"approve", upgradeID}, e.bus()...)...)
	if err == nil || !strings.Contains(err.Error(), "not awaiting approval") {
		t.Errorf("a second approve: %v\n%s", err, out)
	}
}

// waitK8sEvent waits for an Event of reason on the Deployment whose message
// contains sub.
func (e *env) waitK8sEvent(deployment, reason, sub string) {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), time.Minute, reason+" on "+deployment, func(ctx context.Context) (bool, error) {
		list, err := e.w.Client().CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Deployment,involvedObject.name=" + deployment})
		if err != nil {
			return false, err
		}
		for _, ev := range list.Items {
			if ev.Reason == reason && strings.Contains(ev.Message, sub) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}
