package computespec_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// The rollout controller's side of a rollout, as the undo and request
// tests drive one to its end through compute-spec (pkg/controller's tests
// hold the same helpers).

// decision is upgrade.approved or upgrade.rejected of upgradeID on w.
func (e *env) decision(typ, id, upgradeID string, w events.ObjectRef) cloudevents.Event {
	e.t.Helper()
	ev, err := events.New(id, typ, events.Source("cli"), w.String(), events.DecisionData{UpgradeID: upgradeID, Workload: w, By: "alice"})
	if err != nil {
		e.t.Fatal(err)
	}
	return ev
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
