package fleetnet_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// wide are permissions that let a member do anything on the hub.
func wide(string) fleetnet.Perms {
	return fleetnet.Perms{Publish: []string{">"}, Subscribe: []string{">"}}
}

// leaks probes, on a fleet of members a and b, what member b's side can do
// to member a's subjects through the hub and returns what got through.
// Member b's server takes any local client, so all it sends and receives
// crosses the hub on b's leaf credentials, the boundary under test.
func leaks(t *testing.T, f *fleet) []string {
	t.Helper()
	var got []string
	hub, a, b := f.hubConn(), f.memberConn("a"), f.memberConn("b")

	// Writing: what only a may send the hub, then b's own outcome. One
	// connection's messages keep their order through the leaf, so once
	// b's own has arrived, a forged one sent before it never will.
	seen := subscribe(t, hub, "fleet.>", "$JSC.R.>")
	mine := fleetnet.RolloutSubject("b", "rollout.completed")
	until(t, "member b's outcomes reaching the hub", seen, func() { publish(t, b, mine, "probe") })
	forged := []string{fleetnet.RolloutSubject("a", "rollout.completed"), "fleet.a.sync.S.x", "$JSC.R.a.x.y.z.w", fleetnet.PushSubject}
	for _, s := range forged {
		publish(t, b, s, "forged")
	}
	publish(t, b, mine, "mine")
	for m := range drain(t, seen, "mine") {
		got = append(got, "b sent the hub "+m.Subject)
	}

	// Reading: the hub's messages for a, then a push every member gets.
	spy := subscribe(t, b, "fleet.a.>", "$JS.a.API.>", "$JSC.R.>")
	push := subscribe(t, b, fleetnet.PushSubject)
	own := subscribe(t, a, "fleet.a.>")
	until(t, "the push reaching member b", push, func() { publish(t, hub, fleetnet.PushSubject, "probe") })
	until(t, "a promotion reaching member a", own, func() { publish(t, hub, "fleet.a.promote.probe", "probe") })
	for _, s := range []string{"fleet.a.promote.go", "$JS.a.API.STREAM.INFO.FLEET_OUT", "$JSC.R.a.x.y.z.w"} {
		publish(t, hub, s, "for a")
	}
	publish(t, hub, fleetnet.PushSubject, "last")
	for range drain(t, push, "last") {
	}
	for len(spy) > 0 {
		got = append(got, "b read "+(<-spy).Subject)
	}
	return slices.Compact(got)
}

// TestMembersAreConfined: through the hub, member b can neither send
// member a's outcomes, sourcing deliveries or API replies (nor a push),
// nor read a's promotions, the hub's requests to a's JetStream or their
// replies; b's own outcomes and the push go through.
func TestMembersAreConfined(t *testing.T) {
	f := newFleet(t, fleetnet.MemberPerms, "a", "b")
	if diff := cmp.Diff([]string(nil), leaks(t, f)); diff != "" {
		t.Errorf("what member b could do to member a's subjects (-want +got):\n%s", diff)
	}
}

// TestTheProbeSeesWidePermissions: with every subject allowed, the same
// probe reports the leaks (the test above can fail).
func TestTheProbeSeesWidePermissions(t *testing.T) {
	f := newFleet(t, wide, "a", "b")
	got := leaks(t, f)
	t.Logf("leaks: %v", got)
	if len(got) < 4 {
		t.Errorf("with wide permissions the probe found only %v", got)
	}
}

// TestAMemberKeyAtTheHubIsRefused: a client that connects to the hub with
// member b's key (not as a leaf) gets a permissions violation for member
// a's subjects.
func TestAMemberKeyAtTheHubIsRefused(t *testing.T) {
	f := newFleet(t, fleetnet.MemberPerms, "a", "b")
	kp, err := nkeys.FromSeed([]byte(f.seeds["b"]))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	errs := make(chan error, 8)
	nc, err := f.hub.Connect("b-at-hub", nats.Nkey(pub, kp.Sign),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, s := range []string{fleetnet.RolloutSubject("a", "rollout.completed"), "fleet.a.sync.S.x"} {
		publish(t, nc, s, "forged")
		wantViolation(t, errs, `Publish to "`+s+`"`)
	}
	if _, err := nc.SubscribeSync("fleet.a.>"); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, errs, `Subscription to "fleet.a.>"`)
}

func wantViolation(t *testing.T, errs <-chan error, what string) {
	t.Helper()
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), what) {
			t.Errorf("got %v, want a permissions violation for %s", err, what)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("no permissions violation for %s", what)
	}
}
