package e2e_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// An upgrade.succeeded published with verify's own key for a pod patch-pod
// has not patched yet (it drains the pod: the gate is False, the grace
// runs) is refused by compute-spec, which reads the pod: dead-lettered
// with the contradiction, a Warning Event on the pod, nothing recorded.
// patch-pod patches the pod after its grace as planned, and the rollout
// completes with true counts: every pod on the target, Ready, its gate
// True. Recorded as is, the forged success counted a pod still on its old
// image, and patch-pod then refused the real plan with the gate left False.
func TestAForgedSuccessChangesNoCountAndStrandsNoPod(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 3, image: e.ref("shop", "1.0.0"), gate: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1",
			"inplace.dev/grace-seconds": "5"}})
	digest := e.push("shop", "1.1.0")

	planned := e.waitEvent(events.UpgradePlanned, e.ns+"/web-", time.Minute)
	plan, err := events.As[events.Plan](planned)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := world.WaitPod(t.Context(), e.w.Client(), e.ns, plan.Pod.Name, time.Minute, "draining for "+plan.UpgradeID,
		func(p *corev1.Pod) bool { return inplace.GateHeldFor(p, plan.UpgradeID) }); err != nil {
		t.Fatal(err)
	}
	forged, err := events.New("forged-"+plan.Pod.Name, events.UpgradeSucceeded, events.Source("verify"), plan.Pod.String(),
		events.OutcomeData{Plan: plan, Outcome: events.OutcomeSucceeded, Reason: inplace.ReasonUpdated, FinishedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	forged.SetExtension(events.ExtUpgradeID, plan.UpgradeID)
	e.publishAs(busauth.Verify, forged)

	done := e.waitEvent(events.RolloutCompleted, "/web", 3*time.Minute)
	d, err := events.As[events.RolloutData](done)
	if err != nil {
		t.Fatal(err)
	}
	if d.Counts.Succeeded != 3 {
		t.Errorf("rollout.completed counts %+v; want 3 succeeded", d.Counts)
	}
	e.waitAllOn("web", 3, digest, time.Minute)
	pods, err := e.w.Client().CoreV1().Pods(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if s, _ := inplace.GateStatus(&p); s != corev1.ConditionTrue || imageref.DigestOf(world.ContainerStatus(&p, "app").ImageID) != digest {
			t.Errorf("pod %s: gate %s, image %s; want True on %s", p.Name, s, world.ContainerStatus(&p, "app").ImageID, digest)
		}
	}
	if why := e.deadLetters(computespec.Name)[forged.ID()]; !strings.Contains(why, "the pod shows the upgrade not patched") {
		t.Errorf("dead letter of the forged success: %q; want it refused, the pod not patched", why)
	}
	refused := e.eventsOnceThere(plan.Pod.Name, computespec.EventRefused)[computespec.EventRefused]
	if len(refused) == 0 || !strings.Contains(refused[0], "Refused upgrade.succeeded of upgrade "+plan.UpgradeID) {
		t.Errorf("Events %s on %s: %q; want the refusal of the forged success", computespec.EventRefused, plan.Pod.Name, refused)
	}
}

// publishAs publishes ev on the stack's bus as identity id, with its own
// key (what anyone holding that key can do).
func (e *env) publishAs(id string, ev cloudevents.Event) {
	e.t.Helper()
	opts, err := busauth.Dial(e.s.Credentials, id)
	if err != nil {
		e.t.Fatal(err)
	}
	nc, err := nats.Connect(e.s.NATSURL, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(e.t.Context(), 10*time.Second)
	defer cancel()
	b, err := bus.Attach(ctx, nc, e.s.Bus.Config(), slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := b.Publish(ctx, ev); err != nil {
		e.t.Fatalf("publish as %s: %v", id, err)
	}
}
