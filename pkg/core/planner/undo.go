package planner

import (
	"errors"
	"fmt"
	"slices"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// ErrUndo: an undo push does not match the rollout record.
var ErrUndo = errors.New("refused undo")

// CheckUndo holds an undo push (inplace undo) to the rollout record prev:
// it must name the last rollout of the workload that moved pods, the
// workload's rollout must have Ended, and the push must go back to exactly
// the images the record has those pods running before it. The push is a
// claim; the record decides. A redelivered undo (its own rollout in prev)
// passes. The record must be of the workload ref as it lives now (not of
// one deleted and made again under its name).
func CheckUndo(prev *rollout.Rollout, ref events.ObjectRef, upgradeID string, push events.UpgradeRequestData) error {
	if push.Undo == "" || (prev != nil && prev.UpgradeID == upgradeID) {
		return nil
	}
	if prev == nil {
		return fmt.Errorf("%w: %s has no rollout to undo", ErrUndo, push.Target)
	}
	if prev.Workload.UID != "" && ref.UID != "" && prev.Workload.UID != ref.UID {
		return fmt.Errorf("%w: the rollouts recorded for %s are of another %s of that name (uid %s, not %s)",
			ErrUndo, ref, ref.Kind, prev.Workload.UID, ref.UID)
	}
	if !prev.Phase.Finished() && prev.Phase != rollout.Halted {
		return fmt.Errorf("%w: upgrade %s of %s is %s; undo once it ends", ErrUndo, prev.UpgradeID, prev.Workload, prev.Phase)
	}
	last, err := rollout.Undoable(prev)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", ErrUndo, err)
	case last.UpgradeID != push.Undo:
		return fmt.Errorf("%w: the last rollout of %s that moved pods is %s, not %s", ErrUndo, prev.Workload, last.UpgradeID, push.Undo)
	}
	want := last.Back
	if back, _ := imageref.Parse(want.Image); !imageref.SameRepository(want.Image, push.Name()) ||
		push.Digest != want.Digest || push.Tag != back.Tag {
		return fmt.Errorf("%w: upgrade %s of %s moved its pods from %s, not %s", ErrUndo, last.UpgradeID, prev.Workload, want.Ref(), push.Ref())
	}
	if len(push.Containers) == 0 {
		return fmt.Errorf("%w: an undo names the containers upgrade %s moved (%v)", ErrUndo, last.UpgradeID, want.Containers)
	}
	for _, c := range push.Containers {
		if !slices.Contains(want.Containers, c) {
			return fmt.Errorf("%w: upgrade %s of %s did not move container %s", ErrUndo, last.UpgradeID, prev.Workload, c)
		}
	}
	return nil
}
