package patchpod_test

import (
	"errors"
	"strings"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
	"github.com/inplace-dev/inplace/test/world"
)

// A plan whose upgrade the rollout record ended while patch-pod drained
// the pod (the watchdog's deadline, or an outcome recorded early) is
// refused, and the gate patch-pod set False for that upgrade is set True
// again: nothing else would open it, and the pod would stay NotReady on
// its old image. A refused plan of another upgrade leaves a gate held for
// the real one alone: that upgrade goes on.
func TestARefusedPlanOpensTheGateItHeld(t *testing.T) {
	w, ns, f := setup(t)
	v1, v2 := fntest.Push(t, w, "refusegate/app", "v1"), fntest.Push(t, w, "refusegate/app", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "drained", v1.Ref, true))
	plan := fntest.Plan(t, pod, "up-drain", v2)
	plan.GraceSeconds = 60
	if _, err := f.Handle(t.Context(), prepulled(t, plan)); !fntest.IsNotYet(err) {
		t.Fatalf("first delivery: %v; want not yet while draining", err)
	}
	fntest.WaitPod(t, w, pod, "gate False", func(p *corev1.Pod) bool { return inplace.GateHeldFor(p, plan.UpgradeID) })

	other := plan
	other.UpgradeID = "up-never"
	refusedFor(t, f.Handle, prepulled(t, other), guard.ReasonNotPlanned)
	if p := fntest.Get(t, w, pod); !inplace.GateHeldFor(p, plan.UpgradeID) {
		t.Fatalf("a refused plan of another upgrade opened the gate of %s: %+v", plan.UpgradeID, gateCondition(p))
	}

	r := fntest.Records.Rollout(t, plan.Owner)
	r.Pods[pod.Name].State = rollout.Failed
	fntest.Records.Put(t, r)
	refusedFor(t, f.Handle, prepulled(t, plan), guard.ReasonNotPlanned)
	after := fntest.WaitPod(t, w, pod, "gate True and Ready again", func(p *corev1.Pod) bool {
		s, _ := inplace.GateStatus(p)
		return s == corev1.ConditionTrue && world.PodReady(p)
	})
	if g := gateCondition(after); g.Reason != inplace.GateReasonDone || !strings.Contains(g.Message, "up-drain did not go ahead") {
		t.Errorf("gate %s %q; want %s, naming the upgrade", g.Reason, g.Message, inplace.GateReasonDone)
	}
	if img := after.Spec.Containers[0].Image; img != v1.Ref {
		t.Errorf("image %s; want still %s", img, v1.Ref)
	}
}

func refusedFor(t *testing.T, h fntest.Handler, in cloudevents.Event, reason string) {
	t.Helper()
	_, err := h(t.Context(), in)
	var r *guard.Refusal
	if k, _ := settle.Classify(err); k != settle.Fail || !errors.As(err, &r) || r.Reason != reason {
		t.Fatalf("err %v (%s); want a permanent refusal %s", err, k, reason)
	}
}
