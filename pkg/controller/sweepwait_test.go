package controller_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/planner"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

// stuck is a workload's controller that never moves: each template sync
// step and each release answers "not yet", and the cache never shows a
// change (changingCluster, never changed).
type stuck struct{ syncs, releases int }

func (s *stuck) Sync(context.Context, *rollout.Rollout) (rollout.Sync, bool, error) {
	s.syncs++
	return rollout.Sync{}, false, settle.NotYet(time.Second, "the Deployment's controller has not observed the template")
}
func (s *stuck) Hold(context.Context, *rollout.Rollout, *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
	return nil, nil
}
func (s *stuck) Release(context.Context, *rollout.Rollout) error {
	s.releases++
	return settle.NotYet(time.Second, "the controller has not counted the pods labelled back")
}

// sweepBound is how long one sweep of in-memory records may take; a sweep
// that waited for the stuck controller would take maxSyncWait or
// maxHoldWait (5 s), or half of what is left of sweepCut, its context's
// deadline.
const (
	sweepBound = time.Second
	sweepCut   = 10 * time.Second
)

// timedSweep sweeps once within sweepCut and reports how long it took.
func timedSweep(t *testing.T, ro *controller.Rollouts) ([]string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), sweepCut)
	defer cancel()
	start := time.Now()
	outs, err := ro.Sweep(ctx)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	var types []string
	for _, o := range outs {
		types = append(types, o.Type())
	}
	return types, took
}

// A template sync whose controller never moves (shop/api, swept first)
// holds no other rollout: one sweep tries its step once and returns at
// once, and shop/web's pod past its deadline is reminded in that sweep.
// The next sweep tries the sync again. Before, the sweep waited
// maxSyncWait for a change after the step (and again after each of up to
// syncSteps steps while changes came) before it looked at web.
func TestAStuckTemplateSyncHoldsNoOtherRollout(t *testing.T) {
	x := &watched{t: t, c: newFakeCluster(1), store: replay.NewMemStore(nil), now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	syncer := &stuck{}
	x.fn, x.ro = controllertest.NewChain(controller.Deps{Cache: &changingCluster{fakeCluster: x.c}, Store: x.store, Syncer: syncer,
		Watchdog: planner.Watchdog{Slack: 10 * time.Second, NudgeEvery: 30 * time.Second, Nudges: 2, PrepullTimeout: time.Minute},
		Defaults: config.NewStore(config.StandardDefaults(), nil), Now: func() time.Time { return x.now }})
	a := only(t, x.push())
	api := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}
	if rollout.Key(api) >= rollout.Key(web) {
		t.Fatalf("%s is not swept before %s", rollout.Key(api), rollout.Key(web))
	}
	r := &rollout.Rollout{UpgradeID: "u-api", Workload: api, Phase: rollout.Syncing, SettledBy: "watchdog-u-api",
		StartedAt: x.now.Add(-time.Hour), UpdatedAt: x.now.Add(-time.Hour), ProgressAt: x.now.Add(-time.Hour),
		Pods: map[string]*rollout.Pod{"api-0": {Name: "api-0", UID: "uid-api-0", State: rollout.Succeeded, UpgradeID: "u-api"}}}
	if _, err := x.store.Update(t.Context(), rollout.Key(api), func([]byte) ([]byte, error) { return json.Marshal(r) }); err != nil {
		t.Fatal(err)
	}
	x.now = x.now.Add(time.Minute + 11*time.Second) // past web's pod's deadline (prepull 1m + slack 10s)
	for i := range 2 {
		got, took := timedSweep(t, x.ro)
		if took > sweepBound {
			t.Errorf("sweep %d took %s; want at most %s", i+1, took, sweepBound)
		}
		if syncer.syncs != i+1 {
			t.Errorf("sweep %d: the stuck sync was stepped %d times in all; want %d (once a sweep)", i+1, syncer.syncs, i+1)
		}
		if i == 0 && (len(got) != 1 || got[0] != events.UpgradePlanned) {
			t.Errorf("sweep 1 emitted %v; want web's pod reminded (upgrade.planned)", got)
		}
	}
	if p := x.rollout().Pods[a.Pod.Name]; p.Attempt() != 1 {
		t.Errorf("web's late pod is at attempt %d; want 1 (reminded)", p.Attempt())
	}
	raw, _, err := x.store.Get(t.Context(), rollout.Key(api))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := controller.Decode(raw); err != nil || got.Phase != rollout.Syncing {
		t.Errorf("api's rollout %v (%v); want still Syncing, never abandoned", got, err)
	}
}

// A halted StatefulSet's release that its controller never counts is tried
// once a sweep, and the sweep returns at once: the next sweep tries again.
func TestAStuckReleaseHoldsNoSweep(t *testing.T) {
	db := events.ObjectRef{Kind: "StatefulSet", Namespace: "shop", Name: "db", UID: "sts-uid"}
	rec, _ := json.Marshal(inplace.SyncRecord{UpgradeID: "u-1", Hold: true, Revision: "db-abc"})
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "sts-uid",
		Annotations: map[string]string{inplace.SyncAnnotation: string(rec)}}}
	c := &changingCluster{fakeCluster: newFakeCluster(0)}
	c.wl = kube.Workload{Ref: db, Meta: sts.ObjectMeta, Object: sts}
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	r := &rollout.Rollout{UpgradeID: "u-1", Workload: db, Phase: rollout.Halted, StartedAt: now, UpdatedAt: now, ProgressAt: now,
		Pods: map[string]*rollout.Pod{"db-0": {Name: "db-0", UID: "uid-db-0", State: rollout.RolledBack, UpgradeID: "u-1", PlannedAt: now}}}
	store := replay.NewMemStore(nil)
	if _, err := store.Update(t.Context(), rollout.Key(db), func([]byte) ([]byte, error) { return json.Marshal(r) }); err != nil {
		t.Fatal(err)
	}
	syncer := &stuck{}
	ro := controller.New(controller.Deps{Cache: c, Store: store, Syncer: syncer,
		Defaults: config.NewStore(config.StandardDefaults(), nil), Now: func() time.Time { return now }})
	for i := range 2 {
		if _, took := timedSweep(t, ro); took > sweepBound {
			t.Errorf("sweep %d took %s; want at most %s", i+1, took, sweepBound)
		}
		if syncer.releases != i+1 {
			t.Errorf("sweep %d: released %d times in all; want %d (once a sweep)", i+1, syncer.releases, i+1)
		}
	}
}

// blocking is a template syncer whose first step blocks until release is
// closed (a delivery's sync in the middle of a slow write), noting when it
// has begun; each step answers "not yet".
type blocking struct {
	mu      sync.Mutex
	n       int
	begun   chan struct{}
	release chan struct{}
}

func (b *blocking) Sync(context.Context, *rollout.Rollout) (rollout.Sync, bool, error) {
	b.mu.Lock()
	b.n++
	first := b.n == 1
	b.mu.Unlock()
	if first {
		close(b.begun)
		<-b.release
	}
	return rollout.Sync{}, false, settle.NotYet(time.Second, "the Deployment's controller has not observed the template")
}

func (b *blocking) steps() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// A template sync a delivery of this process is driving (it holds the
// workload's sync lock) is left to it by the sweep, which returns at once
// instead of waiting for the lock. Before, the sweep waited on the lock
// for as long as the delivery's sync ran (here until the delivery is let
// go, after sweepCut/2).
func TestASyncDrivenByADeliveryHoldsNoSweep(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	r := &rollout.Rollout{UpgradeID: "u-1", Workload: web, Phase: rollout.Syncing, SettledBy: "watchdog-u-1",
		StartedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour), ProgressAt: now.Add(-time.Hour),
		Pods: map[string]*rollout.Pod{"web-0": {Name: "web-0", UID: "uid-web-0", State: rollout.Succeeded, UpgradeID: "u-1"}}}
	store := replay.NewMemStore(nil)
	if _, err := store.Update(t.Context(), rollout.Key(web), func([]byte) ([]byte, error) { return json.Marshal(r) }); err != nil {
		t.Fatal(err)
	}
	syncer := &blocking{begun: make(chan struct{}), release: make(chan struct{})}
	ro := controller.New(controller.Deps{Cache: newFakeCluster(1), Store: store, Syncer: syncer,
		Defaults: config.NewStore(config.StandardDefaults(), nil), Now: func() time.Time { return now }})
	delivery := make(chan error, 1)
	go func() {
		_, err := controller.SyncTemplate(t.Context(), ro, r)
		delivery <- err
	}()
	<-syncer.begun
	let := time.AfterFunc(sweepCut/2, func() { close(syncer.release) }) // lets a sweep that waits go on
	_, took := timedSweep(t, ro)
	if took > sweepBound {
		t.Errorf("sweep took %s; want at most %s", took, sweepBound)
	}
	if let.Stop() {
		close(syncer.release)
	}
	if err := <-delivery; err == nil {
		t.Error("the delivery's sync answered nil; want its \"not yet\"")
	}
	if n := syncer.steps(); n != 1 {
		t.Errorf("%d sync steps; want 1 (the delivery's: the sweep leaves it to the lock's holder)", n)
	}
}
