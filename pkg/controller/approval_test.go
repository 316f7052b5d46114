package controller_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// refused runs compute-spec on in and wants a permanent error saying want.
func (e *env) refused(in cloudevents.Event, want string) {
	e.T.Helper()
	outs, err := e.Fn.Handle(e.T.Context(), in)
	if err == nil || !errors.Is(err, settle.ErrPermanent) || !strings.Contains(err.Error(), want) {
		e.T.Errorf("%s %s: outputs %d, err %v; want a permanent error saying %q", in.Type(), in.ID(), len(outs), err, want)
	}
}

func shortTypes(outs []cloudevents.Event) []string {
	var out []string
	for _, o := range outs {
		out = append(out, events.Short(o.Type()))
	}
	return out
}

// A new major under inplace.dev/approval: major plans nothing until an
// approval of that very upgrade comes; then it plans like any push. A
// minor needs none.
func TestApprovalHoldsAMajor(t *testing.T) {
	e := newEnv(t)
	web14, _ := e.Image("web", "1.4.0")
	_, d15 := e.Image("web", "1.5.0")
	_, d20 := e.Image("web", "2.0.0")
	w := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web14)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:major", "inplace.dev/approval": "major",
			"inplace.dev/max-unavailable": "2"}})
	minor := e.Handle(e.Pushed("push-minor", "web", "1.5.0", d15))
	if n := len(controllertest.Plans(t, minor)); n != 2 {
		t.Fatalf("a minor under approval: major planned %d pods; want 2 at once", n)
	}
	for _, p := range controllertest.Plans(t, minor) { // one pod finishes, one is still in flight when the major comes
		e.Handle(e.Outcome(events.UpgradeSucceeded, p, ""))
		break
	}

	push := e.Pushed("push-major", "web", "2.0.0", d20)
	outs := e.Handle(push)
	if got := shortTypes(outs); len(got) != 1 || got[0] != "upgrade.approval.requested" {
		t.Fatalf("major push emitted %v; want only upgrade.approval.requested", got)
	}
	req, err := events.As[events.ApprovalData](outs[0])
	if err != nil {
		t.Fatal(err)
	}
	upgradeID := events.DeriveUpgradeID(push.ID(), w)
	if req.UpgradeID != upgradeID || !strings.Contains(req.Why, "new major") || !req.ExpiresAt.After(req.RequestedAt) {
		t.Errorf("approval request %+v", req)
	}
	r := e.State("Deployment", "web")
	if r.Phase != rollout.AwaitingApproval || r.History[e.W.Registry.Host()+"/"+e.NS+"/web"].Digest == d20 {
		t.Fatalf("rollout %s, history %+v; want AwaitingApproval, history not yet on 2.0.0", r.Phase, r.History)
	}
	again := e.Handle(push)
	if len(again) != 1 || again[0].ID() != outs[0].ID() {
		t.Errorf("a redelivered push emitted %v; want the same request (id %s)", shortTypes(again), outs[0].ID())
	}

	e.refused(e.Decision(events.UpgradeApproved, "forged", "u-000000000000", w), "not the rollout")
	if r := e.State("Deployment", "web"); r.Phase != rollout.AwaitingApproval {
		t.Fatalf("a decision on another upgrade moved the rollout to %s", r.Phase)
	}
	ok := e.Decision(events.UpgradeApproved, "approve-1", upgradeID, w)
	got := controllertest.Plans(t, e.Handle(ok))
	if len(got) != 1 {
		t.Fatalf("approved: planned %d pods; want 1 (max-unavailable 2, the minor's pod still in flight)", len(got))
	}
	for _, p := range got {
		if p.UpgradeID != upgradeID || !strings.HasSuffix(p.Target, d20) {
			t.Errorf("plan %+v; want upgrade %s to %s", p, upgradeID, d20)
		}
	}
	r = e.State("Deployment", "web")
	if r.Phase != rollout.Running || r.Approval.Decision != rollout.Approved || r.Approval.By != "alice" {
		t.Errorf("after approval: %s %+v", r.Phase, r.Approval)
	}
	if len(controllertest.Plans(t, e.Handle(ok))) != 1 {
		t.Error("a redelivered approval did not re-emit its plans")
	}
	e.refused(e.Decision(events.UpgradeRejected, "reject-late", upgradeID, w), "not awaiting approval")
}

// A rejection ends the rollout: nothing planned, and an approval after it
// is refused.
func TestApprovalRejected(t *testing.T) {
	e := newEnv(t)
	api1, _ := e.Image("api", "1.0.0")
	_, d11 := e.Image("api", "1.1.0")
	w := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "api"}
	e.Create(controllertest.Spec{Name: "api", Replicas: 1, Containers: []corev1.Container{controllertest.Container("app", api1)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/approval": "all"}})
	push := e.Pushed("push-api", "api", "1.1.0", d11)
	if got := shortTypes(e.Handle(push)); len(got) != 1 || got[0] != "upgrade.approval.requested" {
		t.Fatalf("push under approval: all emitted %v", got)
	}
	upgradeID := events.DeriveUpgradeID(push.ID(), w)
	if outs := e.Handle(e.Decision(events.UpgradeRejected, "no", upgradeID, w)); len(outs) != 0 {
		t.Errorf("a rejection emitted %v", shortTypes(outs))
	}
	r := e.State("Deployment", "api")
	if r.Phase != rollout.Rejected || r.Reason != rollout.ReasonRejected || !strings.Contains(r.Message, "alice") {
		t.Errorf("after rejection: %s %s %q", r.Phase, r.Reason, r.Message)
	}
	e.refused(e.Decision(events.UpgradeApproved, "yes-after-no", upgradeID, w), "not awaiting approval")
	if len(e.Handle(push)) != 0 {
		t.Error("the rejected push, delivered again, did something")
	}
}

// Nobody decides: the watchdog ends the rollout when the approval expires,
// and a late approval is refused.
func TestApprovalExpires(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: e.KV, Now: func() time.Time { return now },
		Defaults: config.NewStore(config.StandardDefaults(), nil)})
	api1, _ := e.Image("api", "1.0.0")
	_, d2 := e.Image("api", "2.0.0")
	w := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "api"}
	e.Create(controllertest.Spec{Name: "api", Replicas: 1, Containers: []corev1.Container{controllertest.Container("app", api1)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:major", "inplace.dev/approval": "major"}})
	push := e.Pushed("push-2", "api", "2.0.0", d2)
	e.Handle(push)
	upgradeID := events.DeriveUpgradeID(push.ID(), w)

	now = now.Add(config.StandardDefaults().ApprovalTimeout - time.Minute)
	if outs, err := e.Ro.Sweep(t.Context()); err != nil || len(outs) != 0 {
		t.Fatalf("sweep before the deadline: %v %v", shortTypes(outs), err)
	}
	now = now.Add(2 * time.Minute)
	outs, err := e.Ro.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := shortTypes(outs); len(got) != 1 || got[0] != "upgrade.approval.expired" {
		t.Fatalf("sweep after the deadline emitted %v; want upgrade.approval.expired", got)
	}
	r := e.State("Deployment", "api")
	if r.Phase != rollout.Rejected || r.Reason != rollout.ReasonApprovalExpired {
		t.Errorf("after expiry: %s %s", r.Phase, r.Reason)
	}
	_, err = e.Fn.Handle(t.Context(), e.Decision(events.UpgradeApproved, "too-late", upgradeID, w))
	if !errors.Is(err, settle.ErrPermanent) || !strings.Contains(err.Error(), "not awaiting approval") {
		t.Errorf("a late approval: %v; want it refused", err)
	}
}
