package controller

import (
	"context"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// HoldWrites has ctl's writers of key, once they would write, call wait
// instead of waiting the spacing, as if key's last write took took.
func HoldWrites(ctl *Rollouts, key string, took time.Duration, wait func(ctx context.Context)) {
	ctl.commits.wrote(key, took, 0)
	ctl.commits.wait = func(ctx context.Context, k string, _ time.Duration) {
		if k == key {
			wait(ctx)
		}
	}
}

// QueuedWrites is how many changes of key wait for a write.
func QueuedWrites(ctl *Rollouts, key string) int {
	ctl.commits.mu.Lock()
	defer ctl.commits.mu.Unlock()
	return len(ctl.commits.queue[key])
}

// HoldStatefulSet is ctl.holdStatefulSet: r's StatefulSet held before its
// plans go out.
func HoldStatefulSet(ctx context.Context, ctl *Rollouts, r *rollout.Rollout) {
	ctl.holdStatefulSet(ctx, r)
}

// SyncTemplate is ctl.syncTemplate: a delivery driving r's template sync.
func SyncTemplate(ctx context.Context, ctl *Rollouts, r *rollout.Rollout) (*rollout.Rollout, error) {
	return ctl.syncTemplate(ctx, r)
}
