package patchpod_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
	"github.com/inplace-dev/inplace/test/world"
)

// TestPatchChangesOnlyPlannedContainers: one patch moves the planned
// container and writes the state; a redelivery writes nothing and reports
// the same pod.patched.
func TestPatchChangesOnlyPlannedContainers(t *testing.T) {
	w, ns, f := setup(t)
	app1, app2 := fntest.Push(t, w, "patch/app", "v1"), fntest.Push(t, w, "patch/app", "v2")
	side := fntest.Push(t, w, "patch/side", "v1")
	p := fntest.Pod(ns, "web", app1.Ref, false)
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: side.Ref})
	pod := fntest.RunPod(t, w, p)
	plan := fntest.Plan(t, pod, "up-1", app2)

	out := fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, plan)), events.PodPatched)
	got := fntest.Get(t, w, pod)
	wantImages := []string{app2.Pinned, side.Ref}
	if diff := cmp.Diff(wantImages, []string{got.Spec.Containers[0].Image, got.Spec.Containers[1].Image}); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	st, err := inplace.ParseState(got)
	if err != nil || st == nil {
		t.Fatalf("state: %v, %v", st, err)
	}
	if st.UpgradeID != "up-1" || st.Phase != inplace.PhasePatched || len(st.Containers) != 1 || st.Containers[0].Name != "app" ||
		st.Containers[0].PreviousImage != app1.Ref || st.Owner != plan.Owner {
		t.Errorf("state = %+v, want up-1 Patched with app's previous image %s and the plan's owner", st, app1.Ref)
	}
	data := fntest.Data[events.PatchedData](t, out)
	if out.ID() != inplace.StepID(plan, events.PodPatched) || data.Plan.UpgradeID != "up-1" || data.ResourceVersion == "" {
		t.Errorf("pod.patched id %s data %+v, want the step id and a resourceVersion", out.ID(), data)
	}
	fntest.WaitEvent(t, w, pod, "InPlaceUpgrade", "Upgrading container app in place to image \""+app2.Pinned+"\"")

	settled := fntest.WaitPod(t, w, pod, "restarted on v2 and Ready", func(p *corev1.Pod) bool {
		cs := fntest.ContainerStatus(p)
		return cs.ImageID == app2.ImageID && cs.Ready && world.PodReady(p)
	})
	again := fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, plan)), events.PodPatched)
	if again.ID() != out.ID() {
		t.Errorf("redelivery emitted id %s, want %s", again.ID(), out.ID())
	}
	if after := fntest.Get(t, w, pod); after.ResourceVersion != settled.ResourceVersion {
		t.Errorf("redelivery wrote the pod: resourceVersion %s → %s", settled.ResourceVersion, after.ResourceVersion)
	}

	// up-1 landed (no gate: the pod on the target and ready is its end);
	// a plan the rollout record does not have is refused, the pod as it is.
	other := plan
	other.UpgradeID = "up-2"
	_, err = f.Handle(t.Context(), prepulled(t, other))
	var r *guard.Refusal
	if !errors.As(err, &r) || r.Reason != guard.ReasonNotPlanned {
		t.Errorf("a plan the record does not have: err = %v, want refused %s", err, guard.ReasonNotPlanned)
	}
	if after := fntest.Get(t, w, pod); after.ResourceVersion != settled.ResourceVersion {
		t.Errorf("the refused plan wrote the pod")
	}
}

// TestPatchDrainsGateFirst: a pod with the gate goes NotReady first and is
// patched only after the grace period.
func TestPatchDrainsGateFirst(t *testing.T) {
	w, ns, f := setup(t)
	v1, v2 := fntest.Push(t, w, "patch/gated", "v1"), fntest.Push(t, w, "patch/gated", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "gated", v1.Ref, true))
	plan := fntest.Plan(t, pod, "up-gate", v2)
	plan.GraceSeconds = 2

	outs, err := f.Handle(t.Context(), prepulled(t, plan))
	if !fntest.IsNotYet(err) || len(outs) != 0 {
		t.Fatalf("first delivery = %d outputs, %v; want not yet while draining", len(outs), err)
	}
	drained := fntest.WaitPod(t, w, pod, "gate False and NotReady", func(p *corev1.Pod) bool {
		s, _ := inplace.GateStatus(p)
		return s == corev1.ConditionFalse && !world.PodReady(p)
	})
	if img := drained.Spec.Containers[0].Image; img != v1.Ref {
		t.Errorf("image = %s while draining, want still %s", img, v1.Ref)
	}
	gate := gateCondition(drained)
	if gate.Reason != inplace.GateReasonStart {
		t.Errorf("gate reason = %s, want %s", gate.Reason, inplace.GateReasonStart)
	}
	fntest.WaitEvent(t, w, pod, "InPlaceUpgrade", "Readiness gate inplace.dev/ready set False")

	r := fntest.Drive(t, f.Handle, prepulled(t, plan))
	fntest.One(t, r, events.PodPatched)
	st, err := inplace.ParseState(fntest.Get(t, w, pod))
	if err != nil || st == nil {
		t.Fatalf("state: %v %v", st, err)
	}
	if waited := st.PatchedAt.Sub(gate.LastTransitionTime.Time); waited < 2*time.Second {
		t.Errorf("patched %s after the gate went False, want at least the 2s grace", waited)
	}
	if r.NotYet == 0 {
		t.Error("no not-yet while the grace period ran")
	}
}

func gateCondition(p *corev1.Pod) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == inplace.ReadinessGate {
			return c
		}
	}
	return corev1.PodCondition{}
}

// TestPatchReportsOthersChanges: a pod deleted, replaced or changed by
// someone else since the plan is reported, never patched.
func TestPatchReportsOthersChanges(t *testing.T) {
	w, ns, f := setup(t)
	v1, v2 := fntest.Push(t, w, "patch/others", "v1"), fntest.Push(t, w, "patch/others", "v2")
	v3 := fntest.Push(t, w, "patch/others", "v3")
	tests := []struct {
		name   string
		change func(t *testing.T, pod *corev1.Pod)
		reason string
	}{
		{"deleted", func(t *testing.T, pod *corev1.Pod) { deletePod(t, w, pod) }, inplace.ReasonPodDeleted},
		{"replaced", func(t *testing.T, pod *corev1.Pod) {
			deletePod(t, w, pod)
			fntest.RunPod(t, w, fntest.Pod(pod.Namespace, pod.Name, v1.Ref, false))
		}, inplace.ReasonPodReplaced},
		{"changed by others", func(t *testing.T, pod *corev1.Pod) {
			fntest.SetImage(t, w, pod, "app", v3.Ref)
		}, inplace.ReasonChangedByOthers},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := fntest.RunPod(t, w, fntest.Pod(ns, "p"+string(rune('a'+i)), v1.Ref, false))
			plan := fntest.Plan(t, pod, "up-"+pod.Name, v2)
			tt.change(t, pod)
			out := fntest.One(t, fntest.Drive(t, f.Handle, prepulled(t, plan)), events.UpgradeFailed)
			got := fntest.Data[events.OutcomeData](t, out)
			if got.Reason != tt.reason || got.Outcome != events.OutcomeFailed || got.Plan.Pod != plan.Pod {
				t.Errorf("outcome %s reason %s (%s), want failed %s for the planned pod", got.Outcome, got.Reason, got.Message, tt.reason)
			}
			now, err := w.Client().CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := now.Annotations[inplace.StateAnnotation]; ok || now.Spec.Containers[0].Image == v2.Pinned {
				t.Errorf("the pod was patched: image %s, annotations %v", now.Spec.Containers[0].Image, now.Annotations)
			}
		})
	}
}

func deletePod(t *testing.T, w *world.World, pod *corev1.Pod) {
	t.Helper()
	zero := int64(0)
	if err := w.Client().CoreV1().Pods(pod.Namespace).Delete(t.Context(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := world.Eventually(t.Context(), fntest.Timeout, "pod gone", func(ctx context.Context) (bool, error) {
		_, err := w.Client().CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestPatchRBAC: the role patches pods; it cannot delete or create them.
func TestPatchRBAC(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	client := fntest.Identity(t, w, patchpod.RBAC, ns)
	err := client.CoreV1().Pods(ns).Delete(t.Context(), "any", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("delete pod: err = %v, want Forbidden", err)
	}
	_, err = client.CoreV1().Pods(ns).Create(t.Context(), fntest.Pod(ns, "x", "img", false), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("create pod: err = %v, want Forbidden", err)
	}
	if _, err := client.CoreV1().Pods(ns).Get(t.Context(), "any", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get pod: err = %v, want NotFound (allowed, absent)", err)
	}
}
