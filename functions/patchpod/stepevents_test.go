package patchpod_test

import (
	"testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
)

// TestAStepPlanRecordsNoPodEvent: a pod planned in a large step
// (Plan.StepEvents: compute-spec records one Event on the workload for the
// step) is patched without the per-pod InPlaceUpgrade Event; a pod planned
// alone, patched after it by the same function, gets its Event. The
// recorder writes in order, so once the second pod's Event is there the
// first pod's would be too.
func TestAStepPlanRecordsNoPodEvent(t *testing.T) {
	w, ns, f := setup(t)
	v1, v2 := fntest.Push(t, w, "step/app", "v1"), fntest.Push(t, w, "step/app", "v2")
	inStep := fntest.RunPod(t, w, fntest.Pod(ns, "in-step", v1.Ref, false))
	alone := fntest.RunPod(t, w, fntest.Pod(ns, "alone", v1.Ref, false))

	stepPlan := fntest.Plan(t, inStep, "up-step", v2)
	stepPlan.StepEvents = true
	fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, stepPlan)), events.PodPatched)
	fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, fntest.Plan(t, alone, "up-alone", v2))), events.PodPatched)

	fntest.WaitEvent(t, w, alone, "InPlaceUpgrade", "Upgrading container app in place")
	fntest.NoEvents(t, w, inStep, "InPlaceUpgrade") // a pod planned in a step gets no per-pod Event
}
