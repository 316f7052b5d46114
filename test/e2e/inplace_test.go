package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// A Deployment of 10 opted-in pods, pushed a new tag: every pod runs the
// new digest in place (same UID, name, node, IP; exactly one more restart),
// the image was on each node before its pod was patched, and the template
// follows without a rollout.
func TestTenPodsUpgradeInPlace(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 10, image: e.ref("shop", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "30%"}})
	before := e.pods("web")

	digest := e.push("shop", "1.1.0") // the registry notifies the receiver
	e.waitAllOn("web", 10, digest, 3*time.Minute)
	after := e.pods("web")

	for name, b := range before {
		a, ok := after[name]
		if !ok {
			t.Errorf("pod %s is gone", name)
			continue
		}
		if a.UID != b.UID || a.Node != b.Node || a.IP != b.IP {
			t.Errorf("pod %s moved: %+v → %+v", name, b, a)
		}
		if a.RestartCount != b.RestartCount+1 {
			t.Errorf("pod %s restarts %d → %d; want exactly one more", name, b.RestartCount, a.RestartCount)
		}
		if !strings.Contains(a.Image, "1.1.0@"+digest) {
			t.Errorf("pod %s spec image %s; want the pushed tag pinned to %s", name, a.Image, digest)
		}
		// The kubelet found the new image already on the node: pre-pull put it there.
		for _, msg := range e.kubeletEvents(name)["Pulled"] {
			if strings.Contains(msg, "1.1.0") && !strings.Contains(msg, "already present") {
				t.Errorf("pod %s: the kubelet pulled the new image at restart: %s", name, msg)
			}
		}
	}
	done := e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
	r, err := events.As[events.RolloutData](done)
	if err != nil {
		t.Fatal(err)
	}
	if r.Counts.Succeeded != 10 || !r.TemplateSynced {
		t.Errorf("rollout.completed: %+v", r)
	}
	pushes := 0
	for _, ev := range e.stream(events.ImagePushed) {
		if strings.HasSuffix(ev.Subject(), ":1.1.0@"+digest) {
			pushes++
		}
	}
	if pushes != 1 {
		t.Errorf("%d image.pushed events for the push of 1.1.0; want 1 (stream: %v)", pushes, e.types())
	}
	if n := len(e.stream(events.UpgradeSucceeded)); n != 10 {
		t.Errorf("%d upgrade.succeeded; want 10", n)
	}
	d, err := e.w.Client().AppsV1().Deployments(e.ns).Get(t.Context(), "web", metav1GetOptions)
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; !strings.Contains(img, "1.1.0@"+digest) || d.Spec.Paused {
		t.Errorf("template %s paused %v; want the new image, not paused", img, d.Spec.Paused)
	}
}
