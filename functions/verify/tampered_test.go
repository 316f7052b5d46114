package verify_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
)

// TestTamperedStateIsRefused: editing a pod's inplace.dev/state annotation
// (previous image evil:6.6.6) must not make verify "roll back" the pod to
// evil:6.6.6, opted in or not. verify checks the
// state against the rollout record before it writes: a pod that never
// opted in is refused (a Warning Event, a permanent error dead-lettered
// with the reason, no write); an opted-in pod whose upgrade fails is
// rolled back to the image the record holds, never the annotation's, with
// a Warning Event naming what the annotation said and what the record
// holds.
func TestTamperedStateIsRefused(t *testing.T) {
	fx := setup(t)
	v1 := fntest.Push(t, fx.w, "verify/tamper", "v1")
	evil := fntest.Push(t, fx.w, "verify/evil", "6.6.6")

	t.Run("an opted-in pod whose upgrade fails", func(t *testing.T) {
		pod := fntest.RunPod(t, fx.w, fntest.Pod(fx.ns, "opted", v1.Ref, false))
		missing := fntest.Missing(fx.w, "verify/tamper", "v404") // verify will want to roll back
		plan := fntest.Plan(t, pod, "up-tamper", missing)
		in := fx.patched(t, plan)
		st := state(t, fntest.Get(t, fx.w, pod))
		st.Containers[0].PreviousImage = evil.Ref
		setState(t, fx, pod, *st)

		out := fntest.One(t, fntest.Drive(t, fx.fn.Handle, in), events.UpgradeRolledBack)
		if got := fntest.Data[events.OutcomeData](t, out); got.Reason != "ImagePullBackOff" {
			t.Errorf("rolled back for %s (%s); want ImagePullBackOff", got.Reason, got.Message)
		}
		fntest.WaitEvent(t, fx.w, pod, verify.EventTampered, "names "+evil.Ref+" as container app's previous image; the rollout record holds "+v1.Ref)
		after := fntest.Get(t, fx.w, pod)
		// The imageID the pod ran before: under -count its node may hold
		// the v1 tag of an earlier run's push, which IfNotPresent runs.
		ran := fntest.ContainerStatus(pod).ImageID
		if img, cs := after.Spec.Containers[0].Image, fntest.ContainerStatus(after); img != v1.Ref || cs.ImageID != ran {
			t.Errorf("rolled back to %s (%s); want the recorded %s (%s)", img, cs.ImageID, v1.Ref, ran)
		}
		if st := state(t, after); st.Phase != inplace.PhaseRolledBack || st.Containers[0].PreviousImage != v1.Ref {
			t.Errorf("state %s, previous image %s; want RolledBack, the recorded %s", st.Phase, st.Containers[0].PreviousImage, v1.Ref)
		}
	})

	t.Run("a pod that never opted in", func(t *testing.T) {
		p := fntest.Pod(fx.ns, "bystander", v1.Ref, false)
		delete(p.Annotations, policy.AnnotationPolicy)
		pod := fntest.RunPod(t, fx.w, p)
		cs := fntest.ContainerStatus(pod)
		// A state for an upgrade long past its deadline: verify would roll back.
		tampered := setState(t, fx, pod, inplace.State{UpgradeID: "u-evil", Target: v1.Ref, Phase: inplace.PhasePatched,
			PatchedAt: time.Now().Add(-time.Hour).UTC(), VerifySeconds: 1,
			Owner: events.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)},
			Containers: []inplace.ContainerState{{Name: "app", PreviousImage: evil.Ref, TargetImage: v1.Ref,
				PreviousContainerID: cs.ContainerID, PreviousImageID: cs.ImageID, PreviousRestartCount: cs.RestartCount}}})
		before := fntest.Get(t, fx.w, pod)

		_, err := fx.fn.Handle(t.Context(), fx.podUpdated(t, pod))
		refused(t, err, guard.ReasonNotOptedIn)
		fntest.WaitEvent(t, fx.w, pod, verify.EventRefused, "Refused to act on upgrade u-evil")
		after := fntest.Get(t, fx.w, pod)
		if after.ResourceVersion != before.ResourceVersion || after.Spec.Containers[0].Image != v1.Ref ||
			after.Annotations[inplace.StateAnnotation] != tampered {
			t.Errorf("verify wrote the pod: image %s, resourceVersion %s → %s", after.Spec.Containers[0].Image,
				before.ResourceVersion, after.ResourceVersion)
		}
	})
}

func refused(t *testing.T, err error, reason string) {
	t.Helper()
	var r *guard.Refusal
	if kind, _ := settle.Classify(err); kind != settle.Fail || !errors.As(err, &r) {
		t.Fatalf("err = %v; want a permanent refusal", err)
	}
	if r.Reason != reason {
		t.Errorf("refusal %s (%s); want %s", r.Reason, r.Message, reason)
	}
}

// setState writes st as the pod's state annotation, as an attacker with
// pod patch rights would, and returns the value written.
func setState(t *testing.T, fx fixture, pod *corev1.Pod, st inplace.State) string {
	t.Helper()
	v := st.Encode()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{inplace.StateAnnotation: v}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.w.Client().CoreV1().Pods(pod.Namespace).Patch(t.Context(), pod.Name, types.MergePatchType, patch,
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	return v
}
