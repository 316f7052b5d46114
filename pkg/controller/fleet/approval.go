package fleet

import (
	"context"
	"fmt"

	"github.com/inplace-dev/inplace/pkg/bus"
	core "github.com/inplace-dev/inplace/pkg/core/fleet"
)

// Approval records an approver's verdict on a stage that waits for one
// (core.Pass lets it start, core.Fail halts the fleet there), with a
// compare-and-swap on the push's record: core.Approvable must hold on the
// record as stored. The same verdict given again changes nothing; another
// one is refused. The controller's watch of the bucket wakes the push.
func (s *Store) Approval(ctx context.Context, push, stage string, g core.Gate) error {
	if g.Verdict != core.Pass && g.Verdict != core.Fail {
		return fmt.Errorf("fleet approval %s/%s: verdict %q is not %s or %s", push, stage, g.Verdict, core.Pass, core.Fail)
	}
	var refused error
	err := s.update(ctx, push, func(r *core.Record) (*core.Record, error) {
		refused = nil
		if r == nil {
			refused = fmt.Errorf("push %q: no fleet record", push)
			return nil, bus.ErrNoChange
		}
		if old, ok := r.Approved[stage]; ok {
			if old.Verdict != g.Verdict {
				refused = fmt.Errorf("stage %q: %s already (by %s): %w", stage, old.Verdict, old.By, core.ErrNotApprovable)
			}
			return nil, bus.ErrNoChange
		}
		if refused = core.Approvable(r, stage); refused != nil {
			return nil, bus.ErrNoChange
		}
		if r.Approved == nil {
			r.Approved = map[string]core.Gate{}
		}
		r.Approved[stage] = g
		return r, nil
	})
	if err == nil {
		err = refused
	}
	if err != nil {
		return fmt.Errorf("fleet approval %s/%s: %w", push, stage, err)
	}
	return nil
}
