package controller_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
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
			store, syncer := replay.NewMemStore(nil), &releases{}
			r := &rollout.Rollout{UpgradeID: "u-1", Workload: db, Phase: rollout.Halted, StartedAt: now, UpdatedAt: now, ProgressAt: now,
				Pods: map[string]*rollout.Pod{"db-0": {Name: "db-0", UID: "uid-db-0", State: tt.state, UpgradeID: "u-1", PlannedAt: now}}}
			if _, err := store.Update(t.Context(), rollout.Key(db), func([]byte) ([]byte, error) { return json.Marshal(r) }); err != nil {
				t.Fatal(err)
			}
			ro := controller.New(controller.Deps{Cache: c, Store: store, Syncer: syncer,
				Defaults: config.NewStore(config.StandardDefaults(), nil), Now: func() time.Time { return now }})
			if _, err := ro.Sweep(t.Context()); err != nil {
				t.Fatal(err)
			}
			if syncer.n != tt.want {
				t.Errorf("released %d times; want %d", syncer.n, tt.want)
			}
		})
	}
}
