package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/pkg/config"
)

// buildFleetMember sets up a fleet member's streams on its own NATS (its
// rollout outcomes forwarded to the hub, the hub's releases kept) as the
// operator, and runs the bridge that moves each release onto the member's
// bus.
func (a *App) buildFleetMember(ctx context.Context, p *config.Process, l *links, log *slog.Logger) error {
	if p.FleetMember == "" {
		return nil
	}
	cfg := p.Bus
	js := l.admin.JetStream()
	if err := fleetnet.SetupMember(ctx, js, fleetnet.Member{Cluster: p.FleetMember, Forward: &cfg}); err != nil {
		return fmt.Errorf("--fleet-member %s: %w", p.FleetMember, err)
	}
	log = log.With("fleetMember", p.FleetMember)
	a.Background = append(a.Background, func(ctx context.Context) { resyncMember(ctx, js, log) })
	a.Background = append(a.Background, func(ctx context.Context) {
		for {
			err := fleetnet.Bridge(ctx, js, p.FleetMember, l.admin, log)
			if ctx.Err() != nil {
				return
			}
			log.Error("fleet bridge stopped; starting it again", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
		}
	})
	return nil
}

// resyncMember restarts the member's stale sources of the hub's releases
// every fleetnet.Stale, so a release sent while the member was cut off
// arrives soon after its leaf connection is back.
func resyncMember(ctx context.Context, js jetstream.JetStream, log *slog.Logger) {
	t := time.NewTicker(fleetnet.Stale)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if again, err := fleetnet.ResyncMember(ctx, js); err != nil && ctx.Err() == nil {
			log.Warn("fleet: resyncing the hub's releases", "err", err)
		} else if again {
			log.Info("fleet: restarted a stale source of the hub's releases")
		}
	}
}
