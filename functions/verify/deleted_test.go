package verify_test

import (
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
	"github.com/inplace-dev/inplace/pkg/kube/watcher"
	"github.com/inplace-dev/inplace/test/registry"
)

// deleted deletes pod at once and returns the pod watcher's pod.updated
// for it: watcher.Deleted of the pod as the watcher saw it last, being
// deleted, its containers stopped (as in a namespace's deletion).
func (fx fixture) deleted(t *testing.T, pod *corev1.Pod) cloudevents.Event {
	t.Helper()
	last := fntest.Get(t, fx.w, pod)
	now := metav1.Now()
	last.DeletionTimestamp = &now
	for i := range last.Status.ContainerStatuses {
		cs := &last.Status.ContainerStatuses[i]
		cs.Ready, cs.State = false, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Completed", ContainerID: cs.ContainerID, FinishedAt: now}}
	}
	for i, c := range last.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			last.Status.Conditions[i].Status = corev1.ConditionFalse
		}
	}
	e, ok, err := watcher.Deleted(last)
	if err != nil || !ok {
		t.Fatalf("no deleted pod.updated for %s (state %s): %v", pod.Name, last.Annotations[inplace.StateAnnotation], err)
	}
	zero := int64(0)
	if err := fx.w.Client().CoreV1().Pods(pod.Namespace).Delete(t.Context(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(fntest.Timeout)
	for {
		_, err := fx.w.Client().CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return e
		case time.Now().After(deadline):
			t.Fatalf("pod %s still there after its deletion: %v", pod.Name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAPodDeletedAfterItsSuccessIsNotReportedGone: a pod upgraded without
// a readiness gate keeps its Patched state after the success (verify
// writes nothing on it), so its deletion later draws a pod.updated
// "deleted". That upgrade ended: the process that confirmed the success on
// the stream says nothing more, and another one (another replica, or this
// one restarted) finds the end in the rollout record: nothing for the
// pod.updated, the success again (its id) for the timer, never
// upgrade.failed PodDeleted. Deleted while truly in flight, the pod is
// reported PodDeleted still.
func TestAPodDeletedAfterItsSuccessIsNotReportedGone(t *testing.T) {
	fx := setup(t)
	v1, v2 := fntest.Push(t, fx.w, "verify/gone-after", "v1"), fntest.Push(t, fx.w, "verify/gone-after", "v2")
	other := func() fntest.Handler { return verify.New(fx.deps).Handle }

	// succeed upgrades a new pod name to v2: its timer (pod.patched), the
	// pod.updated that reported the success, and that upgrade.succeeded.
	succeed := func(t *testing.T, name string) (pod *corev1.Pod, plan events.Plan, timer, in, ok cloudevents.Event) {
		t.Helper()
		pod = fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, name, v1.Ref, false))
		plan = fntest.Plan(t, pod, "up-gone-"+name, v2)
		timer = fx.patched(t, plan)
		fntest.WaitPod(t, fx.w, pod, "Ready on v2", readyOn(v2))
		in = fx.podUpdated(t, pod)
		ok = fntest.One(t, fntest.Drive(t, fx.fn.Handle, in), events.UpgradeSucceeded)
		if st := state(t, fntest.Get(t, fx.w, pod)); st.Phase != inplace.PhasePatched {
			t.Fatalf("state %s after a success without a gate; want it still Patched (nothing written)", st.Phase)
		}
		return pod, plan, timer, in, ok
	}
	noFailure := func(t *testing.T, r fntest.Result) {
		t.Helper()
		if r.Err != nil {
			t.Fatalf("handler error: %v", r.Err)
		}
		for _, o := range r.Outs {
			t.Errorf("the deleted pod.updated of an upgrade that succeeded yields %s: %s", o.Type(), o.Data())
		}
	}

	t.Run("confirmed by this process", func(t *testing.T) {
		pod, _, _, in, ok := succeed(t, "confirmed")
		fx.fn.Published(in, []cloudevents.Event{ok}) // the record has the pod in flight still
		noFailure(t, fntest.Drive(t, fx.fn.Handle, fx.deleted(t, pod)))
	})

	t.Run("recorded", func(t *testing.T) {
		pod, plan, timer, _, ok := succeed(t, "recorded")
		ro := fntest.Records.Rollout(t, plan.Owner)
		p := ro.Pods[plan.Pod.Name]
		p.State, p.PatchedAt = rollout.Succeeded, state(t, fntest.Get(t, fx.w, pod)).PatchedAt
		fntest.Records.Put(t, ro)
		deleted := fx.deleted(t, pod)

		noFailure(t, fntest.Drive(t, other(), deleted))
		late := fntest.One(t, fntest.Drive(t, other(), timer), events.UpgradeSucceeded)
		if late.ID() != ok.ID() {
			t.Errorf("the timer's upgrade.succeeded id %s; want %s, as when it ended", late.ID(), ok.ID())
		}
	})

	t.Run("in flight", func(t *testing.T) {
		slow := fntest.Push(t, fx.w, "verify/gone-after", "slow", registry.WithSizeMB(40))
		pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "inflight", v1.Ref, false))
		fx.patched(t, fntest.Plan(t, pod, "up-gone-inflight", slow))
		got := fntest.Data[events.OutcomeData](t, fntest.One(t, fntest.Drive(t, other(), fx.deleted(t, pod)), events.UpgradeFailed))
		if got.Reason != inplace.ReasonPodDeleted {
			t.Errorf("reason = %s (%s), want %s", got.Reason, got.Message, inplace.ReasonPodDeleted)
		}
	})
}
