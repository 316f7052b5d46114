package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// `inplace replay` without --dry-run publishes marked copies of the
// recorded events on the stream, and the running functions handle them:
// every copy is on the stream under the replay's name, the replayed push
// is refused by compute-spec (a replay starts no rollout), nothing in the
// cluster changes, and replaying again under the same name publishes
// nothing (the copies' ids are the replay's, deduplicated).
func TestReplayLivePublishesMarkedCopies(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 2, image: e.ref("shop", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	digest := e.push("shop", "1.1.0")
	e.waitAllOn("web", 2, digest, 3*time.Minute)
	upgradeID := events.UpgradeID(e.waitEvent(events.RolloutCompleted, "/web", time.Minute))
	e.settled(time.Minute)
	before := e.resourceVersions("web")

	out, err := e.inplace(append([]string{"replay", "--upgrade", upgradeID, "--name", "live-1"}, e.conn()...)...)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	var published, picked int
	if _, err := fmt.Sscanf(out, "replay live-1: published %d of %d events", &published, &picked); err != nil || published == 0 || published > picked {
		t.Fatalf("replay said %q (%v); want the picked events published", out, err)
	}
	e.settled(2 * time.Minute)
	copies, pushes := 0, 0
	for _, ev := range e.stream() {
		if events.Ext(ev, events.ExtReplay) != "live-1" {
			continue
		}
		copies++
		if ev.Type() == events.ImagePushed {
			pushes++
			if d := e.deadLetters("compute-spec")[ev.ID()]; !strings.Contains(d, "starts no rollout") {
				t.Errorf("replayed push %s: dead letter %q; want compute-spec's refusal", ev.ID(), d)
			}
		}
	}
	if copies < published || pushes == 0 {
		t.Errorf("%d events marked live-1 on the stream (%d pushes); want at least the %d published, the push among them", copies, pushes, published)
	}
	for name, rv := range e.resourceVersions("web") {
		if before[name] != rv {
			t.Errorf("pod %s changed (resourceVersion %s → %s)", name, before[name], rv)
		}
	}
	out, err = e.inplace(append([]string{"replay", "--upgrade", upgradeID, "--name", "live-1"}, e.conn()...)...)
	if err != nil || !strings.HasPrefix(out, "replay live-1: published 0 of ") {
		t.Errorf("the same replay again: %q %v; want nothing published", out, err)
	}
}
