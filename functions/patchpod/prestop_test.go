package patchpod_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// TestPreStopPatchesRightAfterTheGate: a gated pod behind a Service whose
// restarted container has a preStop hook is patched in the delivery that
// sets its gate False, without waiting for it to leave the EndpointSlice
// (the kubelet stops the container only after its hook, which covers the
// endpoint's removal as it does on deletion); a pod where only a container
// the patch leaves alone has one is drained first.
func TestPreStopPatchesRightAfterTheGate(t *testing.T) {
	sleep := &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}
	cases := []struct {
		name           string
		app, side      *corev1.Lifecycle
		patchedAtFirst bool
	}{
		{name: "hooked", app: sleep, patchedAtFirst: true},
		{name: "sidehooked", side: sleep, patchedAtFirst: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, ns, f := setup(t)
			v1, v2 := fntest.Push(t, w, "patch/"+c.name, "v1"), fntest.Push(t, w, "patch/"+c.name, "v2")
			side := fntest.Push(t, w, "patch/"+c.name+"-side", "v1")
			p := fntest.Pod(ns, c.name, v1.Ref, true)
			p.Spec.Containers[0].Lifecycle = c.app
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: side.Ref,
				ImagePullPolicy: corev1.PullIfNotPresent, Lifecycle: c.side})
			pod := fntest.RunPod(t, w, p)
			service(t, w, ns, c.name)
			waitEndpoint(t, w, pod, true)
			plan := fntest.Plan(t, pod, "up-"+c.name, v2)

			outs, err := f.Handle(t.Context(), prepulled(t, plan))
			patched := err == nil && len(outs) == 1 && outs[0].Type() == events.PodPatched
			if patched != c.patchedAtFirst {
				t.Fatalf("first delivery = %d outputs, %v; want patched %v", len(outs), err, c.patchedAtFirst)
			}
			got := fntest.Get(t, w, pod)
			if s, _ := inplace.GateStatus(got); s != corev1.ConditionFalse {
				t.Errorf("gate %s after the first delivery, want False", s)
			}
			if img := got.Spec.Containers[0].Image; (img == v2.Pinned) != c.patchedAtFirst {
				t.Errorf("image %s after the first delivery; want the new one: %v", img, c.patchedAtFirst)
			}
			if !c.patchedAtFirst {
				return
			}
			st, err := inplace.ParseState(got)
			if err != nil || st == nil {
				t.Fatalf("state: %v %v", st, err)
			}
			if since := gateCondition(got).LastTransitionTime.Time; st.PatchedAt.Before(since.Truncate(1e9)) {
				t.Errorf("patched at %s, before the gate went False at %s", st.PatchedAt, since)
			}
			fntest.WaitEvent(t, w, pod, "InPlaceUpgrade", "patching now: the kubelet stops the restarted containers only after their preStop hooks")
		})
	}
}
