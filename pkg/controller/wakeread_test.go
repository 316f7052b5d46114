package controller_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// garbled is a Store whose reads, once garble is set, give each key's
// revision with bytes no parser takes: a reader that decodes them fails.
type garbled struct {
	controller.Store
	garble atomic.Bool
}

func (g *garbled) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	raw, rev, err := g.Store.Get(ctx, key)
	if g.garble.Load() && raw != nil {
		raw = []byte("{not the record")
	}
	return raw, rev, err
}

// A wake-up reads the record through the process's decoded records: a
// revision already decoded (by a guard, pre-pull or a write) is not
// parsed again. The pod informer wakes the rollout at every change of
// its pods, and a record of a thousand pods costs tens of milliseconds
// to parse.
func TestAWakeUpDecodesNoKnownRevision(t *testing.T) {
	e := newEnv(t)
	store, dec := &garbled{Store: e.KV}, &rollout.Decoded{}
	log := slog.New(slog.DiscardHandler)
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: store, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log), Decoded: dec})
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	if got := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13))); len(got) != 1 {
		t.Fatalf("planned %d pods; want 1", len(got))
	}
	key := rollout.Key(ref)
	raw, rev, err := e.KV.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Get(key, rev, raw); err != nil { // a guard read this revision
		t.Fatal(err)
	}
	store.garble.Store(true)
	outs, err := e.Ro.Wake(t.Context(), ref)
	if err != nil {
		t.Fatalf("wake-up: %v; want the revision decoded once shared", err)
	}
	if n := len(controllertest.Plans(t, outs)); n != 0 {
		t.Errorf("a wake-up with the budget taken planned %d pods; want none", n)
	}
}
