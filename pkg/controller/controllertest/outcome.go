package controllertest

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

// Decision is upgrade.approved or upgrade.rejected of upgradeID on w.
func (e *Env) Decision(typ, id, upgradeID string, w events.ObjectRef) cloudevents.Event {
	e.T.Helper()
	ev, err := events.New(id, typ, events.Source("cli"), w.String(), events.DecisionData{UpgradeID: upgradeID, Workload: w, By: "alice"})
	if err != nil {
		e.T.Fatal(err)
	}
	return ev
}

// Outcome is the upgrade outcome event of a plan. A success is made true
// first (Upgraded): the rollout controller records an outcome only once
// its pod shows it.
func (e *Env) Outcome(typ string, p events.Plan, reason string) cloudevents.Event {
	e.T.Helper()
	if typ == events.UpgradeSucceeded {
		e.Upgraded(p)
	}
	o := events.OutcomeData{Plan: p, Outcome: map[string]string{events.UpgradeSucceeded: events.OutcomeSucceeded,
		events.UpgradeFailed: events.OutcomeFailed}[typ], Reason: reason}
	ev, err := events.New(events.DeriveID(p.UpgradeID+"/"+p.Pod.UID, typ, ""), typ, events.Source("verify"), p.Pod.String(), o)
	if err != nil {
		e.T.Fatal(err)
	}
	return ev
}

// Finish reports every plan of outs succeeded, and the plans that follow,
// until the rollout ends; it returns the rollout.completed data.
func (e *Env) Finish(outs []cloudevents.Event) events.RolloutData {
	e.T.Helper()
	for i := 0; i < 20; i++ {
		var next []cloudevents.Event
		for _, o := range outs {
			if o.Type() == events.RolloutCompleted {
				d, err := events.As[events.RolloutData](o)
				if err != nil {
					e.T.Fatal(err)
				}
				return d
			}
		}
		for _, p := range Plans(e.T, outs) {
			next = append(next, e.Handle(e.Outcome(events.UpgradeSucceeded, p, ""))...)
		}
		outs = next
	}
	e.T.Fatal("no rollout.completed")
	return events.RolloutData{}
}

// Upgraded leaves p's pod as patch-pod and verify leave a gated pod whose
// upgrade succeeded (the planned images set, the state Succeeded), in the
// API server and in the Env's cache.
func (e *Env) Upgraded(p events.Plan) {
	e.T.Helper()
	ctx, pods := e.T.Context(), e.W.Client().CoreV1().Pods(p.Pod.Namespace)
	write := func(build func(*corev1.Pod) ([]byte, error)) {
		pod, err := pods.Get(ctx, p.Pod.Name, metav1.GetOptions{})
		if err != nil {
			e.T.Fatal(err)
		}
		patch, err := build(pod)
		if errors.Is(err, inplace.ErrAlreadyApplied) {
			return
		}
		if err == nil {
			_, err = pods.Patch(ctx, p.Pod.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		}
		if err != nil {
			e.T.Fatalf("upgrade %s: %v", p.Pod, err)
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
		pod, err := e.Cache.Pods.Pods(p.Pod.Namespace).Get(p.Pod.Name)
		if err != nil {
			return false, nil
		}
		st, _ := inplace.ParseState(pod)
		return st != nil && st.UpgradeID == p.UpgradeID && st.Phase == inplace.PhaseSucceeded, nil
	})
	if err != nil {
		e.T.Fatal(err)
	}
}
