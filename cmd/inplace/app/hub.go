package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
)

// HubConsumers are the durable consumers on a fleet hub's bus: the
// controller's, of the pushes its receiver publishes.
var HubConsumers = []bus.ConsumerSpec{{Name: busauth.FleetHub, Types: []string{events.ImagePushed}}}

// hubResync is how often the hub restarts the sources of members gone
// silent (fleetnet.Resync).
const hubResync = 10 * time.Second

// hubRestart is how long a stopped loop of the hub waits to start again.
const hubRestart = 5 * time.Second

// buildFleetHub assembles the hub of --fleet-hub on its identity's
// connection: the fleet bucket, the hub's stream of the members' outcomes
// (sourcing every cluster of the policy), the promotion controller with
// its loops (Run, Consume, the periodic Resync) and the function that
// begins each push the hub's receiver publishes.
func (a *App) buildFleetHub(ctx context.Context, p *config.Process, l *links, log *slog.Logger) error {
	if !p.FleetHub {
		return nil
	}
	b, clusters := l.bus(busauth.FleetHub), clustersOf(p)
	log = log.With("fleetHub", true)
	js := b.JetStream()
	cfg := p.Bus
	cfg.KVBucket = fleetctl.Bucket
	kv, err := bus.OpenKV(ctx, js.Conn(), cfg)
	if err != nil {
		return fmt.Errorf("--fleet-hub: %w", err)
	}
	stream, err := fleetnet.SetupHub(ctx, js, clusters)
	if err != nil {
		return fmt.Errorf("--fleet-hub: %w", err)
	}
	ctrl, err := fleetctl.New(fleetctl.Options{Store: fleetctl.NewStore(kv), Policy: p.Fleet, Log: log,
		Release: fleetctl.StreamPublisher(js)})
	if err != nil {
		return fmt.Errorf("--fleet-policy %s: %w", p.FleetPolicy, err)
	}
	a.Functions = append(a.Functions, hubFunction{ctrl})
	a.Background = append(a.Background,
		loop("fleet controller", log, ctrl.Run),
		loop("fleet reports", log, func(ctx context.Context) error {
			return ctrl.Consume(ctx, stream, busauth.FleetConsumer)
		}),
		func(ctx context.Context) { resyncLoop(ctx, js, clusters, log) })
	log.Info("fleet hub", "policy", p.FleetPolicy, "clusters", clusters)
	return nil
}

// clustersOf are the policy's clusters in stage order.
func clustersOf(p *config.Process) []string {
	var out []string
	for _, s := range p.Fleet.Stages {
		out = append(out, s.Clusters...)
	}
	return out
}

// loop runs fn until ctx ends, logging each error and starting it again
// after hubRestart.
func loop(what string, log *slog.Logger, fn func(context.Context) error) func(context.Context) {
	return func(ctx context.Context) {
		for {
			err := fn(ctx)
			if ctx.Err() != nil {
				return
			}
			log.Error(what+" stopped; starting it again", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(hubRestart):
			}
		}
	}
}

// hubFunction begins each push on the hub's bus in the fleet controller.
type hubFunction struct{ c *fleetctl.Controller }

var _ runner.Function = hubFunction{}

func (hubFunction) Name() string    { return busauth.FleetHub }
func (hubFunction) Types() []string { return []string{events.ImagePushed} }

// Handle records the push (once) and wakes it; it emits nothing on the
// hub's bus: the releases go to the members' subjects.
func (h hubFunction) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	return nil, h.c.Begin(ctx, e)
}
