package fleetworld_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/test/world"
)

var web = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}

// TestTheHubPromotesStageByStage: the hub's promotion controller over the
// real leaf nodes of three clusters. A push goes to staging only; staging's
// chain records its rollout completed on its own bus, which reaches the
// hub's FLEET; the hub then sends both production clusters the push. A
// second push halted in staging never reaches production.
func TestTheHubPromotesStageByStage(t *testing.T) {
	ctx := t.Context()
	f := startFleet(t)
	hub := conn(t, f.HubConn)
	c, store := startHub(t, hub)

	for _, p := range []string{"push-1", "push-2"} {
		if err := c.Begin(ctx, pushEvent(t, p)); err != nil {
			t.Fatal(err)
		}
	}
	waitPushes(t, f.Member("staging"), "push-1", "push-2")

	report(t, f.Member("staging"), "push-1", events.RolloutCompleted)
	report(t, f.Member("staging"), "push-2", events.RolloutHalted)
	waitStreamIDs(t, hub, fleetnet.HubStream, []string{"fleet.staging.rollout.completed staging-push-1",
		"fleet.staging.rollout.halted staging-push-2"})
	waitPushes(t, f.Member("prod-eu"), "push-1")
	waitPushes(t, f.Member("prod-us"), "push-1")
	err := world.Eventually(ctx, 20*time.Second, "push-2 halted", func(ctx context.Context) (bool, error) {
		r, err := store.Get(ctx, "push-2")
		return r != nil && r.Halt != nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.Get(ctx, "push-2")
	if err != nil {
		t.Fatal(err)
	}
	if s := fleet.Summarize(r); s.Stages[1].State != fleet.Stopped || len(r.Sent) != 1 {
		t.Errorf("push-2: prod %s, sent %v; want Stopped, sent to staging only", s.Stages[1].State, r.Sent)
	}
}

// startHub runs the promotion controller on the hub: its bucket, the
// members' reports from FLEET, releases published to the members.
func startHub(t *testing.T, nc *nats.Conn) (*fleetctl.Controller, *fleetctl.Store) {
	t.Helper()
	cfg := bus.DefaultConfig()
	cfg.KVBucket = fleetctl.Bucket
	kv, err := bus.OpenKV(t.Context(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	store := fleetctl.NewStore(kv)
	p := fleet.Policy{Workloads: []string{web.String()}, Stages: []fleet.Stage{
		{Name: "staging", Clusters: []string{"staging"}},
		{Name: "prod", Clusters: []string{"prod-eu", "prod-us"}},
	}}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fleetctl.New(fleetctl.Options{Store: store, Policy: p, Log: slog.New(slog.DiscardHandler),
		Release: fleetctl.StreamPublisher(js)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(t.Context(), fleetnet.HubStream)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- c.Run(t.Context()) }()
	go func() { errs <- c.Consume(t.Context(), s, "fleet-controller") }()
	t.Cleanup(func() {
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("the hub's controller: %v", err)
			}
		}
	})
	return c, store
}

func pushEvent(t *testing.T, id string) cloudevents.Event {
	t.Helper()
	d := events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "2.0.0", Origin: "manual"}
	e, err := events.New(id, events.ImagePushed, events.Source("receiver"), d.Ref(), d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// report records, on the member's own bus, its rollout of push as its
// chain would; fleetnet forwards it to the hub.
func report(t *testing.T, m *world.Member, push, typ string) {
	t.Helper()
	b, err := bus.Connect(t.Context(), conn(t, m.Conn), bus.DefaultConfig(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d := events.RolloutData{UpgradeID: events.DeriveUpgradeID(push, web), Workload: web,
		Target: "registry.example/shop/web:2.0.0", Counts: events.Counts{Pods: 1, Succeeded: 1}}
	e, err := events.New(m.Name+"-"+push, typ, events.Source("compute-spec"), web.String(), d)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(t.Context(), e); err != nil {
		t.Fatal(err)
	}
}

// waitPushes waits until the member's FLEET_IN holds the promotions of
// pushes, and nothing else.
func waitPushes(t *testing.T, m *world.Member, pushes ...string) {
	t.Helper()
	var want []string
	for _, p := range pushes {
		want = append(want, fleetctl.PromoteSubject(m.Name)+" "+p)
	}
	waitStreamIDs(t, conn(t, m.Conn), fleetnet.InStream, want)
}
