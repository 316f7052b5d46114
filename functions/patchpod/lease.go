package patchpod

import (
	"context"
	"errors"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/settle"
)

// heldRetry is how soon an input whose pod another replica holds comes
// back: a holder keeps it for one read-decide-write, milliseconds.
const heldRetry = 200 * time.Millisecond

// lease takes the pod's lease across replicas (none without leases); a pod
// another replica holds is "not yet": the input comes back after heldRetry.
func lease(ctx context.Context, l Leases, function, uid string) (func(), error) {
	if l == nil {
		return func() {}, nil
	}
	release, err := l.Take(ctx, function, uid)
	if errors.Is(err, bus.ErrHeld) {
		return nil, settle.NotYet(heldRetry, "%v", err)
	}
	return release, err
}
