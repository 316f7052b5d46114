package notify

import (
	"context"
	"time"
)

// Wait waits for woken within most and half of what is left of ctx's
// deadline (so a delivery keeps time to answer); false when it did not
// come (or woken is nil).
func Wait(ctx context.Context, woken <-chan struct{}, most time.Duration) bool {
	if woken == nil {
		return false
	}
	if dl, ok := ctx.Deadline(); ok {
		most = min(most, time.Until(dl)/2)
	}
	if most <= 0 {
		return false
	}
	t := time.NewTimer(most)
	defer t.Stop()
	select {
	case <-woken:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
