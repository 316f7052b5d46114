package e2e_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// as connects to the stack's NATS server as identity id, with the
// credentials and permissions the stack gave it.
func (e *env) as(id string) *bus.Bus {
	e.t.Helper()
	opts, err := busauth.Dial(e.s.Credentials, id)
	if err != nil {
		e.t.Fatal(err)
	}
	nc, err := nats.Connect(e.s.NATSURL, append(opts, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))...)
	if err != nil {
		e.t.Fatalf("connect as %s: %v", id, err)
	}
	e.t.Cleanup(nc.Close)
	b, err := bus.Attach(e.t.Context(), nc, e.s.Bus.Config(), slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatalf("attach as %s: %v", id, err)
	}
	return b
}

// The receiver's and the poller's identities, on the stack's real NATS
// server with their real permissions, cannot move a pod backwards nor
// restrict a push to a workload by any field of any event they may publish:
// a moving tag's older digest, published by each with every operator field
// (target, containers, allowOlder, undo), is dead-lettered by compute-spec
// with the fields named and a Warning Event on the Deployment, and no pod
// or template moves; the operator's event, upgrade.requested, is refused
// them by the server. The operator's `inplace upgrade --allow-older` then
// takes the pods and the template back.
func TestRegistryIdentitiesCannotGoBack(t *testing.T) {
	e := newEnv(t)
	older := e.push("web", "stable")
	e.deploy(workload{name: "web", replicas: 2, image: e.ref("web", "stable"),
		annotations: map[string]string{"inplace.dev/policy": "digest", "inplace.dev/max-unavailable": "2"}})
	newer := e.push("web", "stable")
	e.waitAllOn("web", 2, newer, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
	e.settled(time.Minute)
	before := e.resourceVersions("web")

	img, err := imageref.Parse(e.ref("web", "stable"))
	if err != nil {
		t.Fatal(err)
	}
	target := events.ObjectRef{Kind: "Deployment", Namespace: e.ns, Name: "web"}
	forged := map[string]string{} // event id → who published what
	for _, id := range []string{busauth.Receiver, busauth.Poller} {
		b, role := e.as(id), roleOf(t, id)
		for _, typ := range role.Publishes {
			data := map[string]any{"registry": img.Registry, "repository": img.Repository, "tag": "stable", "digest": older,
				"origin": "distribution", "target": target, "containers": []string{"app"}, "allowOlder": true, "undo": "u-000000000000"}
			ev, err := events.New(events.DeriveID("forged", id, typ), typ, events.Source(id), img.Repository+":stable", data)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Publish(t.Context(), ev); err != nil {
				t.Fatalf("%s may publish %s: %v", id, events.Short(typ), err)
			}
			forged[ev.ID()] = id + "'s " + events.Short(typ)
		}
		req := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: img.Registry, Repository: img.Repository,
			Tag: "stable", Digest: older, Origin: "manual"}, Target: &target, AllowOlder: true}
		ev, err := events.New(events.DeriveID("forged", id, events.UpgradeRequested), events.UpgradeRequested, events.Source(id), req.Ref(), req)
		if err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		if err := b.Publish(short, ev); err == nil {
			t.Errorf("%s published an upgrade.requested", id)
		}
		cancel()
	}
	e.settled(2 * time.Minute)

	dead := e.deadLetters(computespec.Name)
	for id, what := range forged {
		reason, ok := dead[id]
		if !ok {
			t.Errorf("%s: not dead-lettered by compute-spec", what)
			continue
		}
		for _, f := range []string{"data.target", "data.containers", "data.allowOlder", "data.undo"} {
			if !strings.Contains(reason, f) {
				t.Errorf("%s: reason %q does not name %s", what, reason, f)
			}
		}
	}
	if msg := e.workloadEvent("web", computespec.EventRefused); !strings.Contains(msg, "data.target") {
		t.Errorf("the Warning Event on the Deployment: %q; want it to name data.target", msg)
	}
	for pod, rv := range e.resourceVersions("web") {
		if before[pod] != rv {
			t.Errorf("pod %s changed (resourceVersion %s → %s)", pod, before[pod], rv)
		}
	}
	e.waitAllOn("web", 2, newer, time.Second)
	if got := e.templateImage("Deployment", "web"); imageref.DigestOf(got) != newer {
		t.Errorf("template image %s; want the newer %s", got, newer)
	}

	out, err := e.inplace(append([]string{"upgrade", "deployment/web", "-n", e.ns, "--image", e.ref("web", "stable") + "@" + older,
		"--allow-older", "--timeout", "3m"}, e.conn()...)...)
	if err != nil {
		t.Fatalf("inplace upgrade --allow-older: %v\n%s", err, out)
	}
	e.waitAllOn("web", 2, older, time.Minute)
	if got := e.templateImage("Deployment", "web"); imageref.DigestOf(got) != older {
		t.Errorf("after the operator's upgrade, template image %s; want the older %s", got, older)
	}
}

func roleOf(t *testing.T, id string) busauth.Role {
	t.Helper()
	r, ok := busauth.RoleOf(id)
	if !ok {
		t.Fatalf("no role %s", id)
	}
	return r
}
