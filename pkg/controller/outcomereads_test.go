package controller_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/world"
)

// pushThree begins a rollout of three pods at once (max-unavailable 100%)
// on e and returns their plans.
func (e *env) pushThree() map[string]events.Plan {
	e.T.Helper()
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 3, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	planned := controllertest.Plans(e.T, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(planned) != 3 {
		e.T.Fatalf("planned %d pods; want 3", len(planned))
	}
	return planned
}

// An outcome is confirmed and planned on from the watched copy of the
// record, and written by a compare-and-swap from the process's own last
// write: with the copy current, recording it reads nothing from the
// bucket (a record holds every pod: each read is the whole rollout).
func TestAnOutcomeReadsNoRecordFromTheBucket(t *testing.T) {
	e := newEnv(t)
	watched := bus.NewWatched(e.KV)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = watched.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	log := slog.New(slog.DiscardHandler)
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: e.KV, Reads: watched, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log), Decoded: &rollout.Decoded{}})
	planned := e.pushThree()
	key := rollout.Key(events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"})
	var plans []events.Plan
	for _, p := range planned {
		e.Upgraded(p)
		plans = append(plans, p)
	}
	e.Handle(e.Outcome(events.UpgradeSucceeded, plans[0], ""))
	_, rev, err := e.KV.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := world.Eventually(t.Context(), 30*time.Second, "the watched copy at the last write", func(ctx context.Context) (bool, error) {
		_, got, err := watched.Get(ctx, key)
		return got == rev, err
	}); err != nil {
		t.Fatal(err)
	}
	reads := e.KV.Reads()
	e.Handle(e.Outcome(events.UpgradeSucceeded, plans[1], ""))
	if n := e.KV.Reads() - reads; n != 0 {
		t.Errorf("recording an outcome read the record from the bucket %d times; want none", n)
	}
	if p := e.State("Deployment", "web").Pods[plans[1].Pod.Name]; p.State != rollout.Succeeded {
		t.Errorf("pod %s is %s; want Succeeded", p.Name, p.State)
	}
}

// lagging is a watched copy that keeps serving one old value of every key.
type lagging struct {
	raw []byte
	rev uint64
}

func (l lagging) Get(context.Context, string) ([]byte, uint64, error)   { return l.raw, l.rev, nil }
func (l lagging) Fresh(context.Context, string) ([]byte, uint64, error) { return l.raw, l.rev, nil }

// An outcome confirmed on a copy that lags the record is recorded only if
// the record written holds the pod as the copy did: here the copy still
// has the pod unplanned (nothing to confirm), the record has it in
// flight, and the pod does not bear the success out. Nothing is recorded.
func TestAnOutcomeConfirmedOnALaggingCopyIsNotRecordedUnconfirmed(t *testing.T) {
	e := newEnv(t)
	log := slog.New(slog.DiscardHandler)
	planned := e.pushThree()
	old := e.State("Deployment", "web")
	var p events.Plan
	for _, p = range planned {
	}
	old.Pods[p.Pod.Name].State = rollout.Pending
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: e.KV, Reads: lagging{raw: raw, rev: 1}, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log)})
	if _, err := e.Fn.Handle(t.Context(), e.Outcome(events.UpgradeSucceeded, p, "")); err == nil {
		t.Error("an outcome checked on a lagging copy was handled; want it retried")
	}
	if got := e.State("Deployment", "web").Pods[p.Pod.Name]; got.State != rollout.InFlight {
		t.Errorf("pod %s is %s; want InFlight: its pod does not bear the success out", got.Name, got.State)
	}
}
