package e2e_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

// Feeding every event of a finished rollout through the chain again (as a
// replay does: new ids, marked as replayed) changes nothing in the cluster.
func TestRedeliveringAFinishedRolloutChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 3, image: e.ref("shop", "1.0.0"), gate: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	digest := e.push("shop", "1.1.0")
	e.waitAllOn("web", 3, digest, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
	time.Sleep(2 * time.Second) // let the watcher publish the last pod states
	before := e.resourceVersions("web")
	recorded := e.stream()
	n := 0
	for _, ev := range recorded {
		if !events.Known(ev.Type()) {
			continue
		}
		again := ev.Clone()
		again.SetID(events.DeriveID(ev.ID(), "replay", "test"))
		again.SetExtension(events.ExtReplay, "test")
		if err := e.s.Bus.Publish(t.Context(), again); err != nil {
			t.Fatal(err)
		}
		n++
	}
	t.Logf("redelivered %d events", n)
	time.Sleep(8 * time.Second) // the chain has handled them by now
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
