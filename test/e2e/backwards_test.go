package e2e_test

import (
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

// TestStalePushesNeverGoBack, for every policy kind (semver, digest,
// force, glob, regexp): a workload runs the older push, rolls out the newer one, and then
// the older push comes again — delivered once more with a new id (as after
// the dedup window), replayed, and replayed asking to start rollouts. None
// of them changes a pod or the Deployment; compute-spec dead-letters each
// with the reason and records a Warning Event on the Deployment: no
// policy rolls the pods or the template back to the older digest.
func TestStalePushesNeverGoBack(t *testing.T) {
	e := newEnv(t)
	kinds := []struct{ name, policy, older, newer string }{
		{"digest", "digest", "latest", "latest"},
		{"force", "force", "latest", "latest"},
		{"glob", "glob:main-*", "main-a", "main-b"},
		{"regexp", `regexp:main-[a-z]+`, "main-a", "main-b"},
		{"semver", "semver:major", "1.0.0", "2.0.0"},
	}
	older := map[string]cloudevents.Event{}
	for _, k := range kinds {
		e.push("bw-"+k.name, k.older)
		older[k.name] = e.waitEvent(events.ImagePushed, "/bw-"+k.name+":"+k.older, time.Minute)
		e.deploy(workload{name: k.name, replicas: 2, image: e.ref("bw-"+k.name, k.older),
			annotations: map[string]string{"inplace.dev/policy": k.policy, "inplace.dev/max-unavailable": "2"}})
	}
	newer := map[string]string{}
	for _, k := range kinds {
		newer[k.name] = e.push("bw-"+k.name, k.newer)
	}
	for _, k := range kinds {
		e.waitAllOn(k.name, 2, newer[k.name], 3*time.Minute)
		e.waitEvent(events.RolloutCompleted, "/"+k.name, time.Minute)
	}
	e.settled(time.Minute)
	before := map[string]map[string]string{}
	for _, k := range kinds {
		before[k.name] = e.resourceVersions(k.name)
	}

	stale := map[string]string{} // event id → how it came
	for _, k := range kinds {
		old := older[k.name]
		late := old.Clone()
		late.SetID(events.DeriveID(old.ID(), "late", "delivery"))
		for how, ev := range map[string]cloudevents.Event{
			"delivered late":              late,
			"replayed":                    replay.Mark(old, "stale", false),
			"replayed, starting rollouts": replay.Mark(old, "stale-start", true),
		} {
			if err := e.s.Bus.Publish(t.Context(), ev); err != nil {
				t.Fatal(err)
			}
			stale[ev.ID()] = k.name + " " + how
		}
	}
	e.settled(2 * time.Minute)

	dead := e.deadLetters(computespec.Name)
	for id, what := range stale {
		reason, ok := dead[id]
		switch {
		case !ok:
			t.Errorf("%s: not dead-lettered by compute-spec", what)
		case strings.HasSuffix(what, " replayed"):
			if !strings.Contains(reason, "starts no rollout") {
				t.Errorf("%s: reason %q; want that a replay starts no rollout", what, reason)
			}
		case !strings.Contains(reason, "never backwards") && !strings.Contains(reason, "downgrade"):
			t.Errorf("%s: reason %q; want never backwards", what, reason)
		}
	}
	for _, k := range kinds {
		after := e.resourceVersions(k.name)
		for pod, rv := range before[k.name] {
			if after[pod] != rv {
				t.Errorf("%s: pod %s changed (resourceVersion %s → %s)", k.name, pod, rv, after[pod])
			}
		}
		e.waitAllOn(k.name, 2, newer[k.name], time.Second)
		d, err := e.w.Client().AppsV1().Deployments(e.ns).Get(t.Context(), k.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+newer[k.name]) {
			t.Errorf("%s: template image %s; want the newer %s", k.name, img, newer[k.name])
		}
	}
}
