package patchpod_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
)

// TestForgedPlansAreRefused: anyone able to publish an image.prepulled
// must not make patch-pod set any pod to any image. A plan the pod's owner
// and its rollout record do not confirm is refused:
// a Warning Event on the pod, a permanent error (dead-lettered with the
// reason), and nothing written to the pod — not its image, not its gate.
func TestForgedPlansAreRefused(t *testing.T) {
	w, ns, f := setup(t)
	v1, v2 := fntest.Push(t, w, "forged/app", "v1"), fntest.Push(t, w, "forged/app", "v2")
	evil := fntest.Push(t, w, "forged/evil", "6.6.6")
	tests := []struct {
		name   string
		pod    func() *corev1.Pod
		forge  func(pod *corev1.Pod) events.Plan
		reason string
	}{
		{"a pod that never opted in", func() *corev1.Pod {
			p := fntest.Pod(ns, "bystander", v1.Ref, true)
			delete(p.Annotations, policy.AnnotationPolicy)
			return p
		}, func(pod *corev1.Pod) events.Plan { return forge(pod, "u-evil", evil) }, guard.ReasonNotOptedIn},
		{"an opted-in pod, the attacker's image in a real upgrade", func() *corev1.Pod {
			return fntest.Pod(ns, "opted", v1.Ref, true)
		}, func(pod *corev1.Pod) events.Plan {
			real := fntest.Plan(t, pod, "u-real", v2) // compute-spec planned v2
			return forge(pod, real.UpgradeID, evil)
		}, guard.ReasonNotThePlan},
		{"an opted-in pod, an upgrade never planned", func() *corev1.Pod {
			return fntest.Pod(ns, "unplanned", v1.Ref, true)
		}, func(pod *corev1.Pod) events.Plan {
			fntest.Plan(t, pod, "u-real2", v2)
			return forge(pod, "u-never", v2)
		}, guard.ReasonNotPlanned},
		{"an opted-in pod, a plan whose upgrade already ended", func() *corev1.Pod {
			return fntest.Pod(ns, "ended", v1.Ref, true)
		}, func(pod *corev1.Pod) events.Plan {
			plan := fntest.Plan(t, pod, "u-ended", v2)
			r := fntest.Records.Rollout(t, plan.Owner)
			r.Pods[pod.Name].State = rollout.Succeeded
			fntest.Records.Put(t, r)
			return plan
		}, guard.ReasonNotPlanned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := fntest.RunPod(t, w, tt.pod())
			plan := tt.forge(pod)
			before := fntest.Get(t, w, pod)

			outs, err := f.Handle(t.Context(), prepulled(t, plan))
			var r *guard.Refusal
			if kind, _ := settle.Classify(err); kind != settle.Fail || !errors.As(err, &r) || len(outs) != 0 {
				t.Fatalf("outputs %d, err %v; want a permanent refusal and none", len(outs), err)
			}
			if r.Reason != tt.reason {
				t.Errorf("reason %s (%s); want %s", r.Reason, r.Message, tt.reason)
			}
			fntest.WaitEvent(t, w, pod, patchpod.EventRefused, "Refused in-place upgrade "+plan.UpgradeID)
			after := fntest.Get(t, w, pod)
			if after.ResourceVersion != before.ResourceVersion || after.Spec.Containers[0].Image != v1.Ref {
				t.Errorf("the pod was written: image %s, resourceVersion %s → %s",
					after.Spec.Containers[0].Image, before.ResourceVersion, after.ResourceVersion)
			}
			if s, _ := inplace.GateStatus(after); s != corev1.ConditionTrue {
				t.Errorf("gate %s; want still True", s)
			}
		})
	}
}

// forge is a plan written by an attacker: pod's app container to target.
func forge(pod *corev1.Pod, upgradeID string, target fntest.Image) events.Plan {
	return events.Plan{
		UpgradeID:  upgradeID,
		Pod:        events.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Node: pod.Spec.NodeName},
		Owner:      events.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)},
		Containers: []events.ContainerPlan{{Name: "app", FromImage: pod.Spec.Containers[0].Image, ToImage: target.Pinned, ToDigest: target.Digest}},
		Target:     target.Pinned, ReadinessGate: inplace.HasGate(pod), VerifySeconds: 60,
	}
}
