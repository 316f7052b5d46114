package controller_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
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
	e.fn, e.ro = newChain(controller.Deps{Cache: e.cache, Store: e.kv, Syncer: s,
		Defaults: config.NewStore(config.StandardDefaults(), nil)})
}

// outcome is the upgrade outcome event of a plan. A success is made true
// first (upgraded): compute-spec records an outcome only once its pod
// shows it.
func (e *env) outcome(typ string, p events.Plan, reason string) cloudevents.Event {
	e.t.Helper()
	if typ == events.UpgradeSucceeded {
		e.upgraded(p)
	}
	o := events.OutcomeData{Plan: p, Outcome: map[string]string{events.UpgradeSucceeded: events.OutcomeSucceeded,
		events.UpgradeFailed: events.OutcomeFailed}[typ], Reason: reason}
	ev, err := events.New(events.DeriveID(p.UpgradeID+"/"+p.Pod.UID, typ, ""), typ, events.Source("verify"), p.Pod.String(), o)
	if err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// finish reports every plan of outs succeeded, and the plans that follows,
// until the rollout ends; it returns the rollout.completed data.
func (e *env) finish(outs []cloudevents.Event) events.RolloutData {
	e.t.Helper()
	for i := 0; i < 20; i++ {
		var next []cloudevents.Event
		for _, o := range outs {
			if o.Type() == events.RolloutCompleted {
				d, err := events.As[events.RolloutData](o)
				if err != nil {
					e.t.Fatal(err)
				}
				return d
			}
		}
		for _, p := range plans(e.t, outs) {
			next = append(next, e.handle(e.outcome(events.UpgradeSucceeded, p, ""))...)
		}
		outs = next
	}
	e.t.Fatal("no rollout.completed")
	return events.RolloutData{}
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
			web12, _ := e.image("web", "1.2.0")
			_, d13 := e.image("web", "1.3.0")
			e.create(spec{name: "web", replicas: 2, containers: []corev1.Container{container("app", web12)},
				annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
			e.withSyncer(syncer{tc.sync})
			d := e.finish(e.handle(e.pushed("push-1", "web", "1.3.0", d13)))
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
	web12, _ := e.image("web", "1.2.0")
	_, d13 := e.image("web", "1.3.0")
	e.create(spec{name: "web", replicas: 3, containers: []corev1.Container{container("app", web12)},
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	first := plans(t, e.handle(e.pushed("push-1", "web", "1.3.0", d13)))
	if len(first) != 1 {
		t.Fatalf("planned %d pods; want 1 (max-unavailable 1)", len(first))
	}
	var gone events.Plan
	for _, p := range first {
		gone = p
	}
	ctx := t.Context()
	if err := e.w.Client().CoreV1().Pods(e.ns).Delete(ctx, gone.Pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.ns, Name: "web"}
	err := world.Eventually(ctx, time.Minute, "the replacement Ready in the cache", func(context.Context) (bool, error) {
		pods, err := e.cache.PodsOf(ref)
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
	outs := e.handle(e.outcome(events.UpgradeFailed, gone, "PodDeleted"))
	if r := e.state("Deployment", "web"); r.Phase != rollout.Running || len(plans(t, outs)) != 1 {
		t.Fatalf("after the deletion: phase %s (%s), %d planned; want Running and the next pod planned", r.Phase, r.Reason, len(plans(t, outs)))
	}
	d := e.finish(outs)
	if want := (events.Counts{Pods: 4, Succeeded: 3, Deleted: 1}); d.Counts != want {
		t.Errorf("counts %+v; want %+v", d.Counts, want)
	}
	for _, p := range e.state("Deployment", "web").Pods {
		if p.Name == gone.Pod.Name || p.State != rollout.Succeeded {
			t.Errorf("pod %s %s", p.Name, p.State)
		}
	}
}

// upgraded leaves p's pod as patch-pod and verify leave a gated pod whose
// upgrade succeeded (the planned images set, the state Succeeded), in the
// API server and in compute-spec's cache.
func (e *env) upgraded(p events.Plan) {
	e.t.Helper()
	ctx, pods := e.t.Context(), e.w.Client().CoreV1().Pods(p.Pod.Namespace)
	write := func(build func(*corev1.Pod) ([]byte, error)) {
		pod, err := pods.Get(ctx, p.Pod.Name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		patch, err := build(pod)
		if errors.Is(err, inplace.ErrAlreadyApplied) {
			return
		}
		if err == nil {
			_, err = pods.Patch(ctx, p.Pod.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		}
		if err != nil {
			e.t.Fatalf("upgrade %s: %v", p.Pod, err)
		}
	}
	write(func(pod *corev1.Pod) ([]byte, error) { return inplace.Patch(pod, p, time.Now()) })
	write(func(pod *corev1.Pod) ([]byte, error) {
		st, err := inplace.ParseState(pod)
		if err != nil || st == nil {
			return nil, fmt.Errorf("state: %v", err)
		}
		return inplace.FinishPatch(pod, *st, inplace.PhaseSucceeded, inplace.ReasonUpdated, time.Now())
	})
	err := world.Eventually(ctx, time.Minute, "the cache shows "+p.Pod.String()+" upgraded", func(context.Context) (bool, error) {
		pod, err := e.cache.Pods.Pods(p.Pod.Namespace).Get(p.Pod.Name)
		if err != nil {
			return false, nil
		}
		st, _ := inplace.ParseState(pod)
		return st != nil && st.UpgradeID == p.UpgradeID && st.Phase == inplace.PhaseSucceeded, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}
