package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/test/registry"
)

// Two pushes in quick succession: every pod ends on the newer image, and
// no pod is ever patched backwards.
func TestTwoQuickPushesEndOnTheNewer(t *testing.T) {
	e := newEnv(t)
	e.push("web", "3.0.0")
	e.deploy(workload{name: "web", replicas: 6, image: e.ref("web", "3.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}})
	m := e.watchPods("web")
	e.push("web", "3.1.0")
	newer := e.push("web", "3.2.0")
	e.waitAllOn("web", 6, newer, 4*time.Minute)
	_, images, _ := m.results()
	if backwards := patchedBackwards(images, "3.0.0", "3.1.0", "3.2.0"); len(backwards) > 0 {
		t.Errorf("patched backwards: %v", backwards)
	}
}

// A push right after the one before ended on every pod, inside verify's
// 15 s recheck: the first upgrade's pod.patched timers come back after the
// second upgrade took their pods, and report the success their upgrade
// ended with (the same event, dropped by the stream's dedup), never a
// failure.
func TestAPushInsideTheRecheckFailsNothing(t *testing.T) {
	e := newEnv(t)
	e.push("quick", "1.0.0")
	e.deploy(workload{name: "quick", replicas: 4, image: e.ref("quick", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "4"}})
	first := e.push("quick", "1.1.0")
	e.waitAllOn("quick", 4, first, 2*time.Minute)
	second := e.push("quick", "1.2.0")
	e.waitAllOn("quick", 4, second, 2*time.Minute)
	e.settled(2 * time.Minute) // every timer has come back and been settled
	// Only this test's pods: the process also watches the pods of tests
	// before it, which their namespaces' deletion is taking away.
	succeeded := 0
	for _, ev := range e.stream(events.UpgradeFailed, events.UpgradeSucceeded) {
		switch {
		case !strings.HasPrefix(ev.Subject(), e.ns+"/"):
		case ev.Type() == events.UpgradeSucceeded:
			succeeded++
		default:
			t.Errorf("%s of %s: %s", ev.Type(), ev.Subject(), ev.Data())
		}
	}
	if succeeded != 8 {
		t.Errorf("%d upgrade.succeeded on the stream; want 8, one per pod and push", succeeded)
	}
}

// A multi-arch push (child manifests, then the tagged index) is one
// image.pushed on the bus; the registry's pull and blob events are none.
func TestMultiArchPushIsOneEvent(t *testing.T) {
	e := newEnv(t)
	digest := e.push("multi", "1.0.0", registry.WithPlatforms("linux/amd64", "linux/arm64/v8"))
	e.waitEvent(events.ImagePushed, "/multi:1.0.0", time.Minute)
	// The registry notifies in order, and the receiver publishes before it
	// answers: once a later push's event is on the bus, every notification
	// of the multi-arch push has been handled.
	e.push("fence", "1.0.0")
	e.waitEvent(events.ImagePushed, "/fence:1.0.0", time.Minute)
	var got []string
	for _, ev := range e.stream(events.ImagePushed) {
		if strings.Contains(ev.Subject(), e.ns+"/multi") {
			got = append(got, ev.Subject())
		}
	}
	if len(got) != 1 || !strings.HasSuffix(got[0], "@"+digest) {
		t.Errorf("image.pushed subjects %v; want one, of the index %s", got, digest)
	}
}

// patchedBackwards returns the image history of every pod that ever went
// to an image older than one it ran before, by the order of tags; an image
// of another tag is reported too, so the check cannot pass by not knowing.
func patchedBackwards(images map[string][]string, tags ...string) map[string][]string {
	rank := map[string]int{}
	for i, tag := range tags {
		rank[tag] = i
	}
	out := map[string][]string{}
	for name, h := range images {
		last := -1
		for _, img := range h {
			ref, err := imageref.Parse(img)
			r, known := rank[ref.Tag]
			if err != nil || !known || r < last {
				out[name] = h
				break
			}
			last = r
		}
	}
	return out
}
