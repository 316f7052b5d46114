package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
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
	rank := map[string]int{"3.0.0": 0, "3.1.0": 1, "3.2.0": 2}
	for name, h := range images {
		last := -1
		for _, img := range h {
			v := img[strings.LastIndex(img, ":")+1:]
			if i := strings.Index(v, "@"); i >= 0 {
				v = v[:i]
			}
			if rank[v] < last {
				t.Errorf("pod %s was patched backwards: %v", name, h)
			}
			last = rank[v]
		}
	}
}

// A multi-arch push (child manifests, then the tagged index) is one
// image.pushed on the bus; the registry's pull and blob events are none.
func TestMultiArchPushIsOneEvent(t *testing.T) {
	e := newEnv(t)
	digest := e.push("multi", "1.0.0", registry.WithPlatforms("linux/amd64", "linux/arm64/v8"))
	e.waitEvent(events.ImagePushed, "/multi:1.0.0", time.Minute)
	time.Sleep(time.Second) // a second event would arrive by now
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
