package computespec_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/world"
)

// undo is the upgrade.requested `inplace undo` publishes: tag@digest of
// repo, restricted to ref's container app, going back on purpose, naming
// the upgrade undone.
func (e *env) undo(id string, ref events.ObjectRef, tag, digest, undoes string) cloudevents.Event {
	e.T.Helper()
	d := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: e.W.Registry.Host(),
		Repository: e.NS + "/web", Tag: tag, Digest: digest, Origin: "manual"},
		Target: &ref, Containers: []string{"app"}, AllowOlder: true, Undo: undoes}
	ev, err := events.New(id, events.UpgradeRequested, events.Source("cli"), d.Ref(), d)
	if err != nil {
		e.T.Fatal(err)
	}
	return ev
}

// moveTo patches the container app of every pod of ref to image, as
// patch-pod would, and waits until the cache shows them running digest.
func (e *env) moveTo(ref events.ObjectRef, image, digest string) {
	e.T.Helper()
	ctx := e.T.Context()
	pods, err := e.Cache.PodsOf(ref)
	if err != nil {
		e.T.Fatal(err)
	}
	body := fmt.Appendf(nil, `{"spec":{"containers":[{"name":"app","image":%q}]}}`, image)
	for _, p := range pods {
		if _, err := e.W.Client().CoreV1().Pods(e.NS).Patch(ctx, p.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}); err != nil {
			e.T.Fatal(err)
		}
	}
	err = world.Eventually(ctx, time.Minute, "pods on "+digest, func(context.Context) (bool, error) {
		pods, err := e.Cache.PodsOf(ref)
		on := 0
		for _, p := range pods {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Ready && imageref.DigestOf(cs.ImageID) == digest {
					on++
				}
			}
		}
		return err == nil && on == len(pods), err
	})
	if err != nil {
		e.T.Fatal(err)
	}
}

// An undo goes back to the images the record has the pods running before
// the last rollout, even down a version the policy would never take, and
// only then: an undo the record does not bear out is refused and plans
// nothing.
func TestUndoGoesBackToTheRecordedImages(t *testing.T) {
	e := newEnv(t)
	web12, d12 := e.Image("web", "1.2.0")
	_, d11 := e.Image("web", "1.1.0")
	web13, d13 := e.Image("web", "1.3.0")
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})

	refused := func(name string, ev cloudevents.Event, want string) {
		t.Helper()
		outs, err := e.Fn.Handle(t.Context(), ev)
		if k, _ := settle.Classify(err); err == nil || k != settle.Fail || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (%s); want refused for good: %q", name, err, k, want)
		}
		if got := controllertest.Plans(t, outs); len(got) > 0 {
			t.Errorf("%s planned %d pods", name, len(got))
		}
	}
	refused("an undo before any rollout", e.undo("undo-0", ref, "1.2.0", d12, "u-000000000000"), "no rollout to undo")

	e.Finish(e.Handle(e.Pushed("push-13", "web", "1.3.0", d13)))
	up := e.State("Deployment", "web").UpgradeID
	e.moveTo(ref, web13+"@"+d13, d13)

	refused("another digest", e.undo("undo-1", ref, "1.1.0", d11, up), "moved its pods from "+web12+"@"+d12)
	refused("the recorded digest under another tag", e.undo("undo-2", ref, "1.1.0", d12, up), "moved its pods from")
	refused("another upgrade", e.undo("undo-3", ref, "1.2.0", d12, "u-000000000000"), "is "+up+", not u-000000000000")

	// Going back without an undo is only what the policy allows: semver
	// never downgrades.
	if got := controllertest.Plans(t, e.Handle(e.undo("older-1", ref, "1.2.0", d12, ""))); len(got) != 0 {
		t.Fatalf("an --allow-older push down a version planned %d pods", len(got))
	}

	outs := e.Handle(e.undo("undo-4", ref, "1.2.0", d12, up))
	got := controllertest.Plans(t, outs)
	if len(got) != 1 {
		t.Fatalf("the undo's first wave planned %d pods; want 1", len(got))
	}
	for name, p := range got {
		c := p.Containers[0]
		if c.FromImage != web13+"@"+d13 || c.ToImage != web12+"@"+d12 || imageref.DigestOf(c.FromImageID) != d13 {
			t.Errorf("%s: %s (%s) → %s; want %s → %s@%s", name, c.FromImage, c.FromImageID, c.ToImage, web13+"@"+d13, web12, d12)
		}
	}
	r := e.State("Deployment", "web")
	if r.Push.Undo != up || r.UpgradeID == up {
		t.Errorf("the record of the undo: upgrade %s undoing %q; want a new upgrade undoing %s", r.UpgradeID, r.Push.Undo, up)
	}
	if again := controllertest.Plans(t, e.Handle(e.undo("undo-4", ref, "1.2.0", d12, up))); len(again) != 1 {
		t.Errorf("a redelivered undo re-emits %d plans; want the same 1", len(again))
	}
	refused("an undo while the undo runs", e.undo("undo-5", ref, "1.2.0", d12, up), "undo once it ends")

	// The second wave is planned under the undo too.
	done := e.Finish(outs)
	if done.Counts.Succeeded != 2 {
		t.Errorf("the undo completed with %+v; want both pods moved back", done.Counts)
	}
	h := e.State("Deployment", "web").History[e.W.Registry.Host()+"/"+e.NS+"/web"]
	if h.Digest != d12 || !slices.Contains(h.Left, d13) {
		t.Errorf("history after the undo: %+v; want %s rolled out, %s left", h, d12, d13)
	}
}

// An undo does not wait for an approver (inplace.dev/approval: all): it
// only goes back to what an approved rollout moved the pods from, as the
// record has it.
func TestUndoNeedsNoApproval(t *testing.T) {
	e := newEnv(t)
	web14, d14 := e.Image("web", "1.4.0")
	web15, d15 := e.Image("web", "1.5.0")
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	e.Create(controllertest.Spec{Name: "web", Replicas: 1, Containers: []corev1.Container{controllertest.Container("app", web14)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/approval": "all"}})
	if got := controllertest.Plans(t, e.Handle(e.Pushed("push-15", "web", "1.5.0", d15))); len(got) != 0 {
		t.Fatalf("a push under approval: all planned %d pods before an approval", len(got))
	}
	up := e.State("Deployment", "web").UpgradeID
	e.Finish(e.Handle(e.Decision(events.UpgradeApproved, "approve-1", up, ref)))
	e.moveTo(ref, web15+"@"+d15, d15)

	got := controllertest.Plans(t, e.Handle(e.undo("undo-1", ref, "1.4.0", d14, up)))
	if r := e.State("Deployment", "web"); len(got) != 1 || r.Phase != rollout.Running {
		t.Errorf("the undo planned %d pods, phase %s; want 1 at once, Running", len(got), r.Phase)
	}
}
