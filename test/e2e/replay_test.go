package e2e_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

// Feeding every event of a finished rollout through the chain again (as a
// replay does: new ids, marked as replayed) changes nothing in the cluster.
// The test waits until every function has handled every replayed event,
// and checks they were handled, not just acked: the replayed pushes are
// dead-lettered by compute-spec (a replay starts no rollout), and pre-pull,
// patch-pod and verify answered each replayed step with its output (the
// stream drops those as the replayed copies they are, but the runner
// counts each publish).
func TestRedeliveringAFinishedRolloutChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 3, image: e.ref("shop", "1.0.0"), gate: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	digest := e.push("shop", "1.1.0")
	e.waitAllOn("web", 3, digest, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
	e.settled(time.Minute) // the watcher's last pod states handled
	before := e.resourceVersions("web")
	answers := map[string]string{ // the step each function answers for good: its input → output
		events.UpgradePlanned: `inplace_events_published_total{function="pre-pull",type="image.prepulled"}`,
		events.ImagePrepulled: `inplace_events_published_total{function="patch-pod",type="pod.patched"}`,
		events.PodPatched:     `inplace_events_published_total{function="verify",type="upgrade.succeeded"}`,
	}
	published := map[string]float64{}
	for _, series := range answers {
		published[series] = e.counter(series)
	}
	var pushes []string
	replayed := map[string]int{}
	for _, ev := range e.stream() {
		if !events.Known(ev.Type()) {
			continue
		}
		again := replay.Mark(ev, "test", false)
		if err := e.s.Bus.Publish(t.Context(), again); err != nil {
			t.Fatal(err)
		}
		replayed[ev.Type()]++
		if ev.Type() == events.ImagePushed {
			pushes = append(pushes, again.ID())
		}
	}
	t.Logf("redelivered %v", replayed)
	e.settled(2 * time.Minute)

	dead := e.deadLetters("compute-spec")
	for _, id := range pushes {
		if !strings.Contains(dead[id], "starts no rollout") {
			t.Errorf("replayed push %s: dead letter %q; want compute-spec's refusal (a replay starts no rollout)", id, dead[id])
		}
	}
	for typ, series := range answers {
		if got := e.counter(series) - published[series]; int(got) < replayed[typ] {
			t.Errorf("%d %s replayed, %v answered (%s): not every one was handled", replayed[typ], events.Short(typ), got, series)
		}
	}
	after := e.resourceVersions("web")
	for name, rv := range before {
		if after[name] != rv {
			t.Errorf("pod %s changed (resourceVersion %s → %s)", name, rv, after[name])
		}
	}
	d, err := e.w.Client().AppsV1().Deployments(e.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec.Paused || d.Annotations["inplace.dev/template-sync"] != "" {
		t.Errorf("the replay touched the Deployment: paused %v", d.Spec.Paused)
	}
}

func (e *env) resourceVersions(app string) map[string]string {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Name] = p.ResourceVersion
	}
	return out
}
