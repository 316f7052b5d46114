package verify_test

import (
	"testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
)

// TestAStepPlanRecordsNoPodEvent: a pod planned in a large step
// (Plan.StepEvents: compute-spec records one Event on the workload when
// the rollout completes) succeeds without the per-pod "Upgraded in place"
// Event; a pod planned alone, verified after it by the same function, gets
// its Event. The recorder writes in order, so once the second pod's Event
// is there the first pod's would be too.
func TestAStepPlanRecordsNoPodEvent(t *testing.T) {
	fx := setup(t)
	v1, v2 := fntest.Push(t, fx.w, "verify/step", "v1"), fntest.Push(t, fx.w, "verify/step", "v2")
	inStep := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "in-step", v1.Ref, false))
	alone := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "alone", v1.Ref, false))
	stepPlan := fntest.Plan(t, inStep, "up-step", v2)
	stepPlan.StepEvents = true
	alonePlan := fntest.Plan(t, alone, "up-alone", v2)

	fntest.One(t, fntest.Drive(t, fx.fn.Handle, fx.patched(t, stepPlan)), events.UpgradeSucceeded)
	fntest.One(t, fntest.Drive(t, fx.fn.Handle, fx.patched(t, alonePlan)), events.UpgradeSucceeded)

	fntest.WaitEvent(t, fx.w, alone, verify.EventUpgrade, "Upgraded in place to image \"")
	fntest.NoEvents(t, fx.w, inStep, verify.EventUpgrade) // a pod planned in a step gets no per-pod Event
}
