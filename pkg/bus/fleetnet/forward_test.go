package fleetnet_test

import (
	"log/slog"
	"testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// TestAMembersChainReportsToTheHub: with Forward, the rollout outcomes a
// member's chain publishes on its own bus reach the hub as
// fleet.<cluster>.rollout.*; its other events stay home.
func TestAMembersChainReportsToTheHub(t *testing.T) {
	ctx := t.Context()
	f := newFleet(t, fleetnet.MemberPerms, "a")
	cfg := bus.DefaultConfig()
	b, err := bus.Connect(ctx, f.memberConn("a"), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := fleetnet.SetupMember(ctx, js(t, f.memberConn("a")), fleetnet.Member{Cluster: "a", Forward: &cfg}); err != nil {
		t.Fatal(err)
	}
	if _, err := fleetnet.SetupHub(ctx, js(t, f.hubConn()), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	for i, typ := range []string{events.UpgradeSucceeded, events.RolloutCompleted, events.RolloutResumed, events.RolloutHalted} {
		e, err := events.New("e"+string(rune('0'+i)), typ, events.Source("test"), "Deployment/ns/web", map[string]string{"n": typ})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	hubHas(t, f, []string{
		`fleet.a.rollout.completed {"n":"` + events.RolloutCompleted + `"}`,
		`fleet.a.rollout.halted {"n":"` + events.RolloutHalted + `"}`,
	})
}
