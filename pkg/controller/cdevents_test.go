package controller_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/planner"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

// TestCDEventsCarryTheCluster: a member of a fleet (cluster in
// config-inplace) emits its service.upgraded with customData naming it.
func TestCDEventsCarryTheCluster(t *testing.T) {
	d := config.StandardDefaults()
	d.Cluster = "prod-eu"
	x := &watched{t: t, c: newFakeCluster(1), store: replay.NewMemStore(nil), now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	x.fn, x.ro = controllertest.NewChain(controller.Deps{Cache: x.c, Store: x.store, Watchdog: planner.Watchdog{},
		Defaults: config.NewStore(d, nil), Now: func() time.Time { return x.now }})
	a := only(t, x.push())
	x.c.onTarget(a)
	x.c.setState(a.Pod.Name, inplace.State{UpgradeID: a.UpgradeID, Phase: inplace.PhaseSucceeded, PatchedAt: x.now, FinishedAt: x.now})
	got := x.sweep(time.Second)
	if len(got[events.CDServiceUpgraded]) != 1 {
		t.Fatalf("events %v; want one service.upgraded", got)
	}
	var body struct{ CustomData events.CDClusterData }
	if err := json.Unmarshal(got[events.CDServiceUpgraded][0].Data(), &body); err != nil {
		t.Fatal(err)
	}
	if body.CustomData.Cluster != "prod-eu" {
		t.Errorf("customData = %+v; want cluster prod-eu", body.CustomData)
	}
}
