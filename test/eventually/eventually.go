// Package eventually is how tests wait for a signal instead of sleeping:
// Poll checks a condition every 50ms until it holds or a timeout passes,
// and Until does so for a test, failing it. test/world offers both as
// world.Eventually and world.Until; the packages the world itself is built
// from (test/images, test/registry) use this one directly, as importing
// the world would be a cycle.
//
// It must not be imported by production code.
package eventually

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Poll polls cond every 50ms until it returns true (with a nil error) or
// timeout passes. An error from cond counts as "not yet"; on timeout the
// returned error names what was awaited and cond's last error.
func Poll(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		if last != nil {
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, err, last)
		}
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// Until is Poll for a condition of the test's own: it fails t, naming what
// was awaited, when cond does not hold within timeout. Call it from the
// test's goroutine.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := Poll(t.Context(), timeout, what, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatal(err)
	}
}
