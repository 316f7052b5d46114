package verify_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// A gated pod patched for an upgrade that nothing will carry on — the
// rollout record has it over (the watchdog's deadline), the record has the
// pod under another upgrade, the owner no longer opts in, or its state was
// edited to a target the record does not have — gets the gate patch-pod
// set False for it set True by verify, which writes nothing else: no pod
// is left NotReady by a refusal.
func TestAnUpgradeNotCarriedOnOpensItsGate(t *testing.T) {
	fx := setup(t)
	v1, v2 := fntest.Push(t, fx.w, "verify/gate", "v1"), fntest.Push(t, fx.w, "verify/gate", "v2")
	tests := []struct {
		name  string
		leave func(t *testing.T, pod *corev1.Pod, r *rollout.Rollout)
	}{
		{"the record has it over", func(_ *testing.T, pod *corev1.Pod, r *rollout.Rollout) {
			r.Pods[pod.Name].State = rollout.Failed
		}},
		{"the record has the pod under another upgrade", func(_ *testing.T, pod *corev1.Pod, r *rollout.Rollout) {
			r.Pods[pod.Name].UpgradeID = "up-other"
		}},
		{"the state's target edited", func(t *testing.T, pod *corev1.Pod, _ *rollout.Rollout) {
			st := state(t, fntest.Get(t, fx.w, pod))
			st.Containers[0].TargetImage = v1.Ref
			setState(t, fx, pod, *st)
		}},
		{"the owner no longer opts in", func(t *testing.T, pod *corev1.Pod, _ *rollout.Rollout) {
			patch := []byte(`{"metadata":{"annotations":{"inplace.dev/policy":null}}}`)
			if _, err := fx.w.Client().CoreV1().Pods(pod.Namespace).Patch(t.Context(), pod.Name, types.MergePatchType, patch,
				metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "gated-"+string(rune('a'+i)), v1.Ref, true))
			plan := fntest.Plan(t, pod, "up-"+pod.Name, v2)
			in := fx.patched(t, plan)
			if p := fntest.Get(t, fx.w, pod); !inplace.GateHeldFor(p, plan.UpgradeID) {
				t.Fatalf("patch-pod left the gate %+v; want it held for %s", p.Status.Conditions, plan.UpgradeID)
			}
			r := fntest.Records.Rollout(t, plan.Owner)
			tt.leave(t, pod, r)
			fntest.Records.Put(t, r)
			before := state(t, fntest.Get(t, fx.w, pod))

			fntest.Drive(t, fx.fn.Handle, in) // an outcome, a refusal: the gate is what counts
			after := fntest.WaitPod(t, fx.w, pod, "gate True", func(p *corev1.Pod) bool {
				s, _ := inplace.GateStatus(p)
				return s == corev1.ConditionTrue
			})
			for _, c := range after.Status.Conditions {
				if c.Type == inplace.ReadinessGate && (c.Reason != inplace.GateReasonDone || !strings.Contains(c.Message, plan.UpgradeID+" is not carried on")) {
					t.Errorf("gate %s %q; want %s naming the upgrade", c.Reason, c.Message, inplace.GateReasonDone)
				}
			}
			if st := state(t, after); st.Phase != before.Phase {
				t.Errorf("state %s; want it left %s", st.Phase, before.Phase)
			}
		})
	}
}
