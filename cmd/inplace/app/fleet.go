package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

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
