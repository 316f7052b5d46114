package patchpod_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/registry"
)

// TestPatchOverALandedUpgrade: a pod without a gate keeps its last
// upgrade's state Patched (verify records success on the bus and in the
// rollout record, not on the pod). While the pod does not pass that
// upgrade's completion check (here it crashes), a plan the record does
// not have waits (the pod is busy); the plan the record has the pod under
// patches it, replacing the old state: the record moves a pod to a new
// upgrade only once the last one ended.
func TestPatchOverALandedUpgrade(t *testing.T) {
	w, ns, f := setup(t)
	v1, v2 := fntest.Push(t, w, "patch/over", "v1"), fntest.Push(t, w, "patch/over", "v2")
	crash := fntest.Push(t, w, "patch/over", "crash", registry.WithCrash())
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "web", v1.Ref, false))
	up1 := fntest.Plan(t, pod, "up-1", crash)
	fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, up1)), events.PodPatched)
	crashed := fntest.WaitPod(t, w, pod, "crashing on the new image", func(p *corev1.Pod) bool {
		cs := fntest.ContainerStatus(p)
		return cs != nil && cs.ImageID == crash.ImageID && (cs.RestartCount >= 2 || (cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"))
	})
	if st, _ := inplace.ParseState(crashed); !inplace.InFlight(crashed, st) {
		t.Fatalf("state %+v of a crashing pod is not in flight", st)
	}

	up2 := fntest.Plan(t, crashed, "up-2", v2)
	stale := up2
	stale.UpgradeID = "up-stale" // not in the record
	if _, err := f.Handle(t.Context(), prepulled(t, stale)); !fntest.IsNotYet(err) {
		t.Errorf("a plan the record does not have, on a busy pod: err = %v, want not yet", err)
	}
	fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, up2)), events.PodPatched)
	after := fntest.Get(t, w, pod)
	st, err := inplace.ParseState(after)
	if err != nil || st.UpgradeID != "up-2" || after.Spec.Containers[0].Image != up2.Containers[0].ToImage {
		t.Errorf("after up-2: image %s, state %+v (%v); want %s under up-2", after.Spec.Containers[0].Image, st, err, up2.Containers[0].ToImage)
	}
}
