package verify_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/registry"
)

// TestALateTimerReportsHowItsUpgradeEnded: upgrade A's pod.patched (the
// timer) comes back after A ended and upgrade B, the next push, was
// patched onto the pod. It reports A's end, the same event (by id) as
// when A ended, not a supersession: B's state records how A stood when B
// took the pod. The timer is handled by another verify (another replica,
// or this one restarted), which has put nothing on the stream.
func TestALateTimerReportsHowItsUpgradeEnded(t *testing.T) {
	fx := setup(t)
	v1, v2, v3 := fntest.Push(t, fx.w, "verify/late", "v1"), fntest.Push(t, fx.w, "verify/late", "v2"), fntest.Push(t, fx.w, "verify/late", "v3")
	other := func() fntest.Handler { return verify.New(fx.deps).Handle }

	for _, gate := range []bool{false, true} {
		name := map[bool]string{false: "succeeded, no end written", true: "succeeded, with a readiness gate (closed since by the next upgrade's drain)"}[gate]
		t.Run(name, func(t *testing.T) {
			pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, map[bool]string{false: "plain", true: "gated"}[gate], v1.Ref, gate))
			a := fntest.Plan(t, pod, "up-a-"+pod.Name, v2)
			timer := fx.patched(t, a)
			fntest.WaitPod(t, fx.w, pod, "Ready on v2", readyOn(v2))
			ok := fntest.One(t, fntest.Drive(t, fx.fn.Handle, fx.podUpdated(t, pod)), events.UpgradeSucceeded)

			b := fntest.Plan(t, fntest.Get(t, fx.w, pod), "up-b-"+pod.Name, v3)
			fx.patched(t, b)
			late := fntest.One(t, fntest.Drive(t, other(), timer), events.UpgradeSucceeded)
			if late.ID() != ok.ID() {
				t.Errorf("late upgrade.succeeded id %s; want %s, as when A ended", late.ID(), ok.ID())
			}
			if got := fntest.Data[events.OutcomeData](t, late); got.Plan.UpgradeID != a.UpgradeID || got.Reason != inplace.ReasonUpdated {
				t.Errorf("late outcome of %s, reason %s (%s); want %s, %s", got.Plan.UpgradeID, got.Reason, got.Message, a.UpgradeID, inplace.ReasonUpdated)
			}
		})
	}

	t.Run("rolled back", func(t *testing.T) {
		pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "back", v1.Ref, false))
		a := fntest.Plan(t, pod, "up-a-back", fntest.Missing(fx.w, "verify/late", "v404"))
		timer := fx.patched(t, a)
		back := fntest.One(t, fntest.Drive(t, fx.fn.Handle, timer), events.UpgradeRolledBack)

		b := fntest.Plan(t, fntest.Get(t, fx.w, pod), "up-b-back", v3)
		fx.patched(t, b)
		late := fntest.One(t, fntest.Drive(t, other(), timer), events.UpgradeRolledBack)
		if late.ID() != back.ID() {
			t.Errorf("late upgrade.rolledback id %s; want %s, as when A ended", late.ID(), back.ID())
		}
	})

	// A was still under way (crash-looping) when the record moved the pod
	// on and B took it (patch-pod's PatchOver): that is a supersession.
	t.Run("under way", func(t *testing.T) {
		crash := fntest.Push(t, fx.w, "verify/late", "crash", registry.WithCrash())
		pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "crashing", v1.Ref, false))
		a := fntest.Plan(t, pod, "up-a-crash", crash)
		timer := fx.patched(t, a)
		crashed := fntest.WaitPod(t, fx.w, pod, "crashing on the new image", func(p *corev1.Pod) bool {
			cs := fntest.ContainerStatus(p)
			return cs != nil && cs.ImageID == crash.ImageID && (cs.RestartCount >= 2 || (cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"))
		})

		b := fntest.Plan(t, crashed, "up-b-crash", v3)
		fx.patched(t, b)
		late := fntest.One(t, fntest.Drive(t, other(), timer), events.UpgradeFailed)
		got := fntest.Data[events.OutcomeData](t, late)
		if want := "upgrade up-a-crash was still Patched when upgrade up-b-crash took the pod"; got.Reason != inplace.ReasonSuperseded || got.Message != want {
			t.Errorf("late outcome %s (%s); want %s (%s)", got.Reason, got.Message, inplace.ReasonSuperseded, want)
		}
		after := fntest.Get(t, fx.w, pod)
		if st := state(t, after); st.UpgradeID != b.UpgradeID || after.Spec.Containers[0].Image != b.Containers[0].ToImage {
			t.Errorf("after A's timer: state of %s, image %s; want B's, %s", st.UpgradeID, after.Spec.Containers[0].Image, b.Containers[0].ToImage)
		}
	})
}
