package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// TestVerifySucceeds: the pod restarts onto the target: the gate goes
// True once the kubelet took the patch up, upgrade.succeeded carries the
// plan, and the success, like one without a gate, is not written to the
// pod (its state stays Patched): the gate was the upgrade's last write.
func TestVerifySucceeds(t *testing.T) {
	fx := setup(t)
	v1, v2 := fntest.Push(t, fx.w, "verify/ok", "v1"), fntest.Push(t, fx.w, "verify/ok", "v2")
	pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "web", v1.Ref, true))
	plan := fntest.Plan(t, pod, "up-ok", v2)

	in := fx.patched(t, plan)
	r := fntest.Drive(t, fx.fn.Handle, in)
	out := fntest.One(t, r, events.UpgradeSucceeded)
	got := fntest.Data[events.OutcomeData](t, out)
	checkPlan(t, got.Plan, plan)
	if got.Outcome != events.OutcomeSucceeded || len(got.Containers) != 1 || got.Containers[0].ImageID != v2.ImageID ||
		got.PatchedAt.IsZero() || got.FinishedAt.Before(got.PatchedAt) {
		t.Errorf("outcome = %+v, want succeeded on %s with timings", got, v2.ImageID)
	}
	if out.ID() != inplace.StepID(plan, events.UpgradeSucceeded) || r.NotYet == 0 {
		t.Errorf("id %s after %d not-yets, want the step id after waiting for the kubelet", out.ID(), r.NotYet)
	}
	after := fntest.WaitPod(t, fx.w, pod, "Ready with the gate True", world.PodReady)
	for _, c := range after.Status.Conditions {
		if c.Type == inplace.ReadinessGate && (c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "took the patch up")) {
			t.Errorf("gate %s %q, want True once the kubelet took the patch up", c.Status, c.Message)
		}
	}
	if st := state(t, after); st.Phase != inplace.PhasePatched {
		t.Errorf("state phase = %s, want Patched (a success is not written)", st.Phase)
	}
	fntest.WaitEvent(t, fx.w, pod, verify.EventUpgrade, "Upgraded in place to image \"")

	// Redelivered: the same event, nothing written.
	rv := fntest.Get(t, fx.w, pod).ResourceVersion
	again := fntest.One(t, fntest.Drive(t, fx.fn.Handle, in), events.UpgradeSucceeded)
	if again.ID() != out.ID() || fntest.Get(t, fx.w, pod).ResourceVersion != rv {
		t.Errorf("redelivery: id %s (want %s), resourceVersion moved: %v", again.ID(), out.ID(), fntest.Get(t, fx.w, pod).ResourceVersion != rv)
	}
	// A pod.updated for an upgrade the rollout record has over does nothing.
	rec := fntest.Records.Rollout(t, plan.Owner)
	rec.Pods[pod.Name].State = rollout.Succeeded
	fntest.Records.Put(t, rec)
	if outs, err := fx.fn.Handle(t.Context(), fx.podUpdated(t, pod)); len(outs) != 0 || err != nil {
		t.Errorf("pod.updated after the end = %d outputs, %v; want none", len(outs), err)
	}
}

// TestVerifyRollsBack: an upgrade the kubelet cannot complete is rolled
// back; the pod runs its previous image and is Ready; upgrade.rolledback
// carries the reason and the kubelet's message.
func TestVerifyRollsBack(t *testing.T) {
	fx := setup(t)
	v1 := fntest.Push(t, fx.w, "verify/rb", "v1")
	crash := fntest.Push(t, fx.w, "verify/rb", "crash", registry.WithCrash())
	slow := fntest.Push(t, fx.w, "verify/rb", "slow", registry.WithSizeMB(40))
	tests := []struct {
		name       string
		target     fntest.Image
		verifySecs int
		reason     string
		message    string
	}{
		{"missing tag", fntest.Missing(fx.w, "verify/rb", "v404"), 60, "ImagePullBackOff", "not found"},
		{"crash loop", crash, 60, "CrashLoopBackOff", "exit code 1"},
		{"deadline", slow, 1, verify.ReasonDeadline, "not done within 1s"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "rb"+string(rune('a'+i)), v1.Ref, i == 0))
			plan := fntest.Plan(t, pod, "up-"+pod.Name, tt.target)
			plan.VerifySeconds = tt.verifySecs

			out := fntest.One(t, fntest.Drive(t, fx.fn.Handle, fx.patched(t, plan)), events.UpgradeRolledBack)
			got := fntest.Data[events.OutcomeData](t, out)
			checkPlan(t, got.Plan, plan)
			if got.Outcome != events.OutcomeRolledBack || got.Reason != tt.reason || !strings.Contains(got.Message, tt.message) {
				t.Errorf("outcome %s reason %s message %q, want rolledback %s with %q", got.Outcome, got.Reason, got.Message, tt.reason, tt.message)
			}
			after := fntest.Get(t, fx.w, pod)
			cs := fntest.ContainerStatus(after)
			// The imageID the pod ran before: under -count its node may hold
			// the v1 tag of an earlier run's push, which IfNotPresent runs.
			ran := fntest.ContainerStatus(pod).ImageID
			if after.Spec.Containers[0].Image != v1.Ref || cs.ImageID != ran || !cs.Ready {
				t.Errorf("after rollback: image %s imageID %s ready %v, want %s (%s) running and ready",
					after.Spec.Containers[0].Image, cs.ImageID, cs.Ready, v1.Ref, ran)
			}
			// The gate went True with the outcome; the kubelet then counts the pod Ready.
			after = fntest.WaitPod(t, fx.w, pod, "Ready after the rollback", world.PodReady)
			if st := state(t, after); st.Phase != inplace.PhaseRolledBack || st.Reason != tt.reason {
				t.Errorf("state %s %s, want RolledBack %s", st.Phase, st.Reason, tt.reason)
			}
			if after.UID != pod.UID {
				t.Error("the pod was replaced")
			}
			fntest.WaitEvent(t, fx.w, pod, verify.EventRollback, "Rolling back container app to image \""+v1.Ref+"\"")
		})
	}
}

// TestVerifyDecidesOnPodUpdated: pod.updated alone (no timer) carries the
// upgrade to its end, with the plan rebuilt from the pod's state and the
// same outcome id as the timer would emit.
func TestVerifyDecidesOnPodUpdated(t *testing.T) {
	fx := setup(t)
	v1, v2 := fntest.Push(t, fx.w, "verify/upd", "v1"), fntest.Push(t, fx.w, "verify/upd", "v2")
	pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "web", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-upd", v2)
	plan.Wave, plan.GraceSeconds = 3, 0
	fx.patched(t, plan)

	var outs []cloudevents.Event
	err := world.Eventually(t.Context(), fntest.Timeout, "an outcome from pod.updated", func(ctx context.Context) (bool, error) {
		var err error
		outs, err = fx.fn.Handle(ctx, fx.podUpdated(t, pod))
		if _, delay := settle.Classify(err); fntest.IsNotYet(err) && delay > fx.deps.MinReady+time.Second {
			t.Fatalf("pod.updated answered not yet for %s: only pod.patched is a timer (pod.updated waits out a min-ready time at most)", delay)
		}
		return len(outs) > 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := fntest.One(t, fntest.Result{Outs: outs}, events.UpgradeSucceeded)
	checkPlan(t, fntest.Data[events.OutcomeData](t, out).Plan, plan)
	if out.ID() != inplace.StepID(plan, events.UpgradeSucceeded) || events.UpgradeID(out) != plan.UpgradeID {
		t.Errorf("id %s upgradeid %s, want the step id and %s", out.ID(), events.UpgradeID(out), plan.UpgradeID)
	}
}

// TestMinReadyEndsWithoutTheTimer: a pod.updated that finds the target
// running for less than the min-ready time comes back when it has passed
// (no change of the pod will say so) and calls the success then, with the
// timer's safety net an hour away: the success does not wait for the timer.
func TestMinReadyEndsWithoutTheTimer(t *testing.T) {
	fx := setup(t)
	deps := fx.deps
	deps.Recheck, deps.MinReady = time.Hour, 15*time.Second
	fn := verify.New(deps)
	v1, v2 := fntest.Push(t, fx.w, "verify/minready", "v1"), fntest.Push(t, fx.w, "verify/minready", "v2")
	pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "web", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-minready", v2)
	plan.GraceSeconds = 0
	fx.patched(t, plan)
	fntest.WaitPod(t, fx.w, pod, "running the target", func(p *corev1.Pod) bool {
		cs := fntest.ContainerStatus(p)
		return cs != nil && cs.ImageID == v2.ImageID && cs.State.Running != nil
	})
	r := fntest.Drive(t, fn.Handle, fx.podUpdated(t, pod))
	out := fntest.One(t, r, events.UpgradeSucceeded)
	if r.NotYet == 0 {
		t.Errorf("decided at once: the min-ready time had passed before the test looked (a loaded machine?)")
	}
	checkPlan(t, fntest.Data[events.OutcomeData](t, out).Plan, plan)
}

// TestVerifyPodDeleted: the pod is deleted under the upgrade.
func TestVerifyPodDeleted(t *testing.T) {
	fx := setup(t)
	v1, v2 := fntest.Push(t, fx.w, "verify/del", "v1"), fntest.Push(t, fx.w, "verify/del", "v2", registry.WithSizeMB(40))
	pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "web", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-del", v2)
	in := fx.patched(t, plan)
	zero := int64(0)
	if err := fx.w.Client().CoreV1().Pods(fx.ns).Delete(t.Context(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	got := fntest.Data[events.OutcomeData](t, fntest.One(t, fntest.Drive(t, fx.fn.Handle, in), events.UpgradeFailed))
	if got.Reason != inplace.ReasonPodDeleted {
		t.Errorf("reason = %s (%s), want %s", got.Reason, got.Message, inplace.ReasonPodDeleted)
	}
}

// TestVerifyRBAC: verify patches pods; it cannot delete or create them.
func TestVerifyRBAC(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	client := fntest.Identity(t, w, verify.RBAC, ns)
	if err := client.CoreV1().Pods(ns).Delete(t.Context(), "any", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete pod: err = %v, want Forbidden", err)
	}
	if _, err := client.CoreV1().Pods(ns).Create(t.Context(), fntest.Pod(ns, "x", "img", false), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create pod: err = %v, want Forbidden", err)
	}
}

func checkPlan(t *testing.T, got, want events.Plan) {
	t.Helper()
	if got.UpgradeID != want.UpgradeID || got.Pod != want.Pod || got.Owner != want.Owner || got.Wave != want.Wave {
		t.Errorf("outcome plan: upgrade %s pod %+v owner %+v wave %d; want %s %+v %+v %d",
			got.UpgradeID, got.Pod, got.Owner, got.Wave, want.UpgradeID, want.Pod, want.Owner, want.Wave)
	}
}

// readyOn: the pod's app container runs img and is ready.
func readyOn(img fntest.Image) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		cs := fntest.ContainerStatus(p)
		return cs != nil && cs.ImageID == img.ImageID && cs.Ready
	}
}

func state(t *testing.T, pod *corev1.Pod) *inplace.State {
	t.Helper()
	st, err := inplace.ParseState(pod)
	if err != nil || st == nil {
		t.Fatalf("state of %s: %v, %v", pod.Name, st, err)
	}
	return st
}
