package controller_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
)

// TestStepEventsAboveASize: a step that plans more pods than
// FoldEventsAbove records one Event on the workload and marks its plans
// StepEvents (patch-pod and verify then record no Normal Event per pod),
// and the rollout's completion one more; a smaller step records none of
// its own and leaves the pods' Events to patch-pod and verify.
func TestStepEventsAboveASize(t *testing.T) {
	for _, n := range []int{3, controller.FoldEventsAbove + 2} {
		t.Run(fmt.Sprintf("%d pods", n), func(t *testing.T) {
			e := newEnv(t)
			web12, _ := e.Image("web", "1.2.0")
			_, d13 := e.Image("web", "1.3.0")
			e.Create(controllertest.Spec{Name: "web", Replicas: int32(n), Containers: []corev1.Container{controllertest.Container("app", web12)},
				Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
			rec := record.NewFakeRecorder(4 * n)
			e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: e.KV, Recorder: rec,
				Defaults: config.NewStore(config.StandardDefaults(), nil)})
			outs := e.Handle(e.Pushed("push-1", "web", "1.3.0", d13))
			plans := controllertest.Plans(t, outs)
			fold := n > controller.FoldEventsAbove
			if len(plans) != n {
				t.Fatalf("planned %d pods; want %d", len(plans), n)
			}
			var target string
			for name, p := range plans {
				target = p.Target
				if p.StepEvents != fold {
					t.Errorf("plan of %s: StepEvents %v; want %v", name, p.StepEvents, fold)
				}
			}
			var want []string
			if fold {
				want = append(want, fmt.Sprintf("Normal InPlaceUpgrade Upgrading %d pods in place to image %q (wave 1)", n, target))
			}
			if diff := cmp.Diff(want, drain(rec)); diff != "" {
				t.Errorf("Events of the step (-want +got):\n%s", diff)
			}
			e.Finish(outs)
			want = nil
			if fold {
				want = append(want, fmt.Sprintf("Normal InPlaceUpgrade Upgraded %d pods in place to image %q", n, target))
			}
			if diff := cmp.Diff(want, drain(rec)); diff != "" {
				t.Errorf("Events of the completion (-want +got):\n%s", diff)
			}
		})
	}
}

// drain is what rec recorded since the last drain.
func drain(rec *record.FakeRecorder) []string {
	var got []string
	for {
		select {
		case ev := <-rec.Events:
			got = append(got, ev)
		default:
			return got
		}
	}
}
