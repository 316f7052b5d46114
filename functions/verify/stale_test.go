package verify_test

import (
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// TestAStaleTimerOfASuccessReportsTheSuccess: upgrade A of a pod without a
// readiness gate succeeds (nothing is written on the pod) and compute-spec
// records it; someone else then moves the pod back to its first image
// (the bench's floor run), and the next rollout, B, takes the workload's
// record (rollout.Begin, rollout.Plan, as compute-spec does) and plans the
// pod. A's timer, parked on the stream, comes back to another verify (a
// replica, or this process restarted), once B has planned the pod and
// once B has patched it (its state records A as still under way: the pod
// no longer showed A's end). Each time it reports A's success, the same
// event (by id) as when A ended, never a failure: the record B took
// carries A's end.
func TestAStaleTimerOfASuccessReportsTheSuccess(t *testing.T) {
	fx := setup(t)
	v1, v2, v3 := fntest.Push(t, fx.w, "verify/stale", "v1"), fntest.Push(t, fx.w, "verify/stale", "v2"), fntest.Push(t, fx.w, "verify/stale", "v3")
	other := func() fntest.Handler { return verify.New(fx.deps).Handle }

	pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "stale", v1.Ref, false))
	a := fntest.Plan(t, pod, "up-stale-a", v2)
	timer := fx.patched(t, a)
	fntest.WaitPod(t, fx.w, pod, "Ready on v2", readyOn(v2))
	ok := fntest.One(t, fntest.Drive(t, fx.fn.Handle, fx.podUpdated(t, pod)), events.UpgradeSucceeded)
	ra := fntest.Records.Rollout(t, a.Owner)
	ra.Pods[a.Pod.Name].State, ra.Phase = rollout.Succeeded, rollout.Completed
	fntest.Records.Put(t, ra)

	fntest.SetImage(t, fx.w, pod, "app", v1.Ref)
	moved := fntest.WaitPod(t, fx.w, pod, "Ready on v1 again", readyOn(v1))
	if st := state(t, moved); st.UpgradeID != a.UpgradeID || st.Phase != inplace.PhasePatched {
		t.Fatalf("state of %s, %s; want A's, still Patched (a success without a gate writes nothing)", st.UpgradeID, st.Phase)
	}
	b := fntest.Plan(t, moved, "up-stale-b", v3)
	now := time.Now().UTC()
	rb := rollout.Begin(ra, b.UpgradeID, b.Owner, fntest.Records.Rollout(t, b.Owner).Push, rollout.Options{Budget: 1}, now)
	rollout.Plan(rb, []rollout.Candidate{{Pod: b.Pod, Ready: true, Containers: b.Containers}}, "test", false, now)
	if p := rb.Pods[b.Pod.Name]; p == nil || p.State != rollout.InFlight || p.UpgradeID != b.UpgradeID {
		t.Fatalf("B's record has the pod %+v; want it in flight under B", p)
	}
	fntest.Records.Put(t, rb)

	late := func(t *testing.T) {
		got := fntest.One(t, fntest.Drive(t, other(), timer), events.UpgradeSucceeded)
		if got.ID() != ok.ID() {
			t.Errorf("A's late upgrade.succeeded id %s; want %s, as when A ended", got.ID(), ok.ID())
		}
		if d := fntest.Data[events.OutcomeData](t, got); d.Plan.UpgradeID != a.UpgradeID {
			t.Errorf("late outcome of %s; want %s's", d.Plan.UpgradeID, a.UpgradeID)
		}
	}
	t.Run("B planned the pod", late)
	fx.patched(t, b)
	if st := state(t, fntest.Get(t, fx.w, pod)); st.Replaced == nil || st.Replaced.UpgradeID != a.UpgradeID || st.Replaced.Phase != inplace.PhasePatched {
		t.Fatalf("B's state records %+v as replaced; want A, still Patched", st.Replaced)
	}
	t.Run("B patched the pod", late)
}
