package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

// releases counts the holds compute-spec asks the template syncer to
// release.
type releases struct{ n int }

func (r *releases) Sync(context.Context, *rollout.Rollout) (rollout.Sync, bool, error) {
	return rollout.Sync{Step: controller.SyncDone}, true, nil
}
func (r *releases) Hold(context.Context, *rollout.Rollout, *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
	return nil, nil
}
func (r *releases) Release(context.Context, *rollout.Rollout) error { r.n++; return nil }

// The watchdog releases the hold of a halted StatefulSet rollout whose
// release was lost with its last outcome, and only once no pod of it is in
// flight (a patch labelled ahead could still land).
func TestWatchdogReleasesAHaltedStatefulSet(t *testing.T) {
	db := events.ObjectRef{Kind: "StatefulSet", Namespace: "shop", Name: "db", UID: "sts-uid"}
	rec, _ := json.Marshal(inplace.SyncRecord{UpgradeID: "u-1", Hold: true, Revision: "db-abc"})
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "sts-uid",
		Annotations: map[string]string{inplace.SyncAnnotation: string(rec)}}}
	c := newFakeCluster(0)
	c.wl = kube.Workload{Ref: db, Meta: sts.ObjectMeta, Object: sts}
	c.add("db-0") // in flight and well within its deadlines
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		state rollout.PodState
		want  int
	}{{"nothing in flight", rollout.RolledBack, 1}, {"a pod in flight", rollout.InFlight, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			syncer := &releases{}
			r := &rollout.Rollout{UpgradeID: "u-1", Workload: db, Phase: rollout.Halted, StartedAt: now, UpdatedAt: now, ProgressAt: now,
				Pods: map[string]*rollout.Pod{"db-0": {Name: "db-0", UID: "uid-db-0", State: tt.state, UpgradeID: "u-1", PlannedAt: now}}}
			sweepOnce(t, r, c, syncer, now)
			if syncer.n != tt.want {
				t.Errorf("released %d times; want %d", syncer.n, tt.want)
			}
		})
	}
}

// changingCluster is a fakeCluster whose workload can change under a
// reader, waking whoever waits for a change of it (the cache's Changed).
type changingCluster struct {
	*fakeCluster
	mu    sync.Mutex
	woken []chan struct{}
}

func (c *changingCluster) Changed(events.ObjectRef) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{}, 1)
	c.woken = append(c.woken, ch)
	return ch, func() {}
}

// change puts sts in the cache and wakes the waiters.
func (c *changingCluster) change(sts *appsv1.StatefulSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wl.Meta, c.wl.Object = sts.ObjectMeta, sts
	for _, ch := range c.woken {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// holds answers each Hold with the next of errs and notes the
// resourceVersion it was handed; before answering the first, the
// StatefulSet changes (its controller wrote its status), as it does
// between the cache's read and the hold's write.
type holds struct {
	releases
	c    *changingCluster
	errs []error
	seen []string
}

func (h *holds) Hold(_ context.Context, _ *rollout.Rollout, sts *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
	h.seen = append(h.seen, sts.ResourceVersion)
	if len(h.seen) == 1 {
		next := sts.DeepCopy()
		next.ResourceVersion = "2"
		h.c.change(next)
	}
	err := h.errs[0]
	h.errs = h.errs[1:]
	return nil, err
}

// A hold refused because the StatefulSet changed after the cache read it
// (the patch's resourceVersion test: what the template syncer reports as
// NotYet) is written again from the cache's newer copy, before the plans
// go out; any other failure is not tried again (the rollout goes on, the
// sync relabels). Without the second try, the first wave's pods were
// patched unlabelled and each relabelled by its own write.
func TestAHoldRefusedForAChangeIsTriedAgain(t *testing.T) {
	db := events.ObjectRef{Kind: "StatefulSet", Namespace: "shop", Name: "db", UID: "sts-uid"}
	for _, tt := range []struct {
		name string
		errs []error
		want []string
	}{
		{"changed while patching", []error{settle.NotYet(time.Second, "db changed while patching it; reading it again"), nil}, []string{"1", "2"}},
		{"another failure", []error{errors.New("connection refused"), nil}, []string{"1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "sts-uid", ResourceVersion: "1"}}
			c := &changingCluster{fakeCluster: newFakeCluster(0)}
			c.wl = kube.Workload{Ref: db, Meta: sts.ObjectMeta, Object: sts}
			h := &holds{c: c, errs: tt.errs}
			ro := controller.New(controller.Deps{Cache: c, Store: replay.NewMemStore(nil), Syncer: h,
				Defaults: config.NewStore(config.StandardDefaults(), nil)})
			r := &rollout.Rollout{UpgradeID: "u-1", Workload: db, Phase: rollout.Running}
			controller.HoldStatefulSet(t.Context(), ro, r)
			if !slices.Equal(h.seen, tt.want) {
				t.Errorf("holds written from resourceVersions %v; want %v", h.seen, tt.want)
			}
		})
	}
}

// sweepOnce stores r as the only rollout record, sweeps once as the
// watchdog at now with c's cluster and syncer, and returns the store.
func sweepOnce(t *testing.T, r *rollout.Rollout, c controller.Cache, syncer controller.Syncer, now time.Time) *replay.MemStore {
	t.Helper()
	store := replay.NewMemStore(nil)
	if _, err := store.Update(t.Context(), rollout.Key(r.Workload), func([]byte) ([]byte, error) { return json.Marshal(r) }); err != nil {
		t.Fatal(err)
	}
	ro := controller.New(controller.Deps{Cache: c, Store: store, Syncer: syncer,
		Defaults: config.NewStore(config.StandardDefaults(), nil), Now: func() time.Time { return now }})
	if _, err := ro.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	return store
}
