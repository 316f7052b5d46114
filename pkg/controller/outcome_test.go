package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/world"
)

// syncer is a template sync that ends at once with a given progress.
type syncer struct{ p rollout.Sync }

func (s syncer) Sync(context.Context, *rollout.Rollout) (rollout.Sync, bool, error) {
	return s.p, true, nil
}

// withSyncer gives the env's compute-spec a template syncer.
func (e *env) withSyncer(s controller.Syncer) {
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: e.KV, Syncer: s,
		Defaults: config.NewStore(config.StandardDefaults(), nil)})
}

// rollout.completed says templateSynced only when the template was synced;
// a sync found impossible, or left to GitOps, is the completion's reason
// with the template's outcome, not a claim that it was synced.
func TestCompletionSaysWhatBecameOfTheTemplate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sync   rollout.Sync
		synced bool
		reason string
	}{
		{"synced", rollout.Sync{Step: controller.SyncDone, Result: events.TemplateSynced, Images: map[string]string{"app": "x"}}, true, ""},
		{"impossible", rollout.Sync{Step: controller.SyncDone, Result: events.TemplateNotSynced, Reason: "RolloutUnderWay",
			Note: "template left as is: the Deployment has 2 active ReplicaSets"}, false, "TemplateNotSynced"},
		{"gitops", rollout.Sync{Step: controller.SyncDone, Result: events.TemplateLeftToGitOps, Reason: "ManagedByArgoCD",
			Note: "write app=… in Git", Images: map[string]string{"app": "r/web:1.3.0@sha256:…"}}, false, "TemplateLeftToGitOps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			web12, _ := e.Image("web", "1.2.0")
			_, d13 := e.Image("web", "1.3.0")
			e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)},
				Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
			e.withSyncer(syncer{tc.sync})
			d := e.Finish(e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
			if d.TemplateSynced != tc.synced || d.Reason != tc.reason || d.Template == nil || d.Template.Result != tc.sync.Result ||
				d.Template.Reason != tc.sync.Reason || !strings.Contains(d.Message, tc.sync.Note) {
				t.Errorf("rollout.completed: synced %v reason %q template %+v message %q", d.TemplateSynced, d.Reason, d.Template, d.Message)
			}
			if d.Counts.Succeeded != 2 {
				t.Errorf("counts %+v", d.Counts)
			}
		})
	}
}

// A pod deleted while in flight does not halt the rollout: it is counted
// as deleted, its replacement (on the old image) is planned like any other
// pod, and the rollout completes with true counts.
func TestPodDeletedInFlightDoesNotHaltTheRollout(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 3, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	first := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(first) != 1 {
		t.Fatalf("planned %d pods; want 1 (max-unavailable 1)", len(first))
	}
	var gone events.Plan
	for _, p := range first {
		gone = p
	}
	ctx := t.Context()
	if err := e.W.Client().CoreV1().Pods(e.NS).Delete(ctx, gone.Pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	err := world.Eventually(ctx, time.Minute, "the replacement Ready in the cache", func(context.Context) (bool, error) {
		pods, err := e.Cache.PodsOf(ref)
		ready := 0
		for _, p := range pods {
			if p.Name == gone.Pod.Name {
				return false, err
			}
			if inplace.Ready(p) {
				ready++
			}
		}
		return err == nil && ready == 3, err
	})
	if err != nil {
		t.Fatal(err)
	}
	outs := e.Handle(e.Outcome(events.UpgradeFailed, gone, "PodDeleted"))
	if r := e.State("Deployment", "web"); r.Phase != rollout.Running || len(controllertest.Plans(t, outs)) != 1 {
		t.Fatalf("after the deletion: phase %s (%s), %d planned; want Running and the next pod planned", r.Phase, r.Reason, len(controllertest.Plans(t, outs)))
	}
	d := e.Finish(outs)
	if want := (events.Counts{Pods: 4, Succeeded: 3, Deleted: 1}); d.Counts != want {
		t.Errorf("counts %+v; want %+v", d.Counts, want)
	}
	for _, p := range e.State("Deployment", "web").Pods {
		if p.Name == gone.Pod.Name || p.State != rollout.Succeeded {
			t.Errorf("pod %s %s", p.Name, p.State)
		}
	}
}
