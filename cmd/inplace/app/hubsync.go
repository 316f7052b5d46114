package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// resyncLoop restarts the hub's sources of members gone silent
// (fleetnet.Resync) at once and every hubResync: a member's source whose
// setup went out while the member was away otherwise waits up to 40 s
// after it returns. The hub's identity cannot see which leaf nodes are
// joined (that is the server's, not an account's, to tell), so every
// cluster of the policy counts as joined: an absent member's source is
// restarted each period, which costs a stream update and loses nothing
// (a source resumes after the last message the hub's stream holds).
func resyncLoop(ctx context.Context, js jetstream.JetStream, clusters []string, log *slog.Logger) {
	t := time.NewTicker(hubResync)
	defer t.Stop()
	for {
		restarted, err := fleetnet.Resync(ctx, js, clusters)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("fleet resync failed; again later", "err", err)
		case len(restarted) > 0:
			log.Debug("fleet resync: restarted the sources of silent members", "members", restarted)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
