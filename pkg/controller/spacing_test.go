package controller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/world"
)

// Outcomes that arrive one after the other, while the record's writer
// waits as long as the record's last write took, share its write: a
// rollout of n pods whose outcomes trickle in is not n writes of the
// whole record.
func TestOutcomesArrivingDuringTheSpacingShareOneWrite(t *testing.T) {
	e, store := newCountingEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	const n = 6
	e.Create(controllertest.Spec{Name: "web", Replicas: n, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	planned := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(planned) != n {
		t.Fatalf("planned %d pods; want %d (max-unavailable 100%%)", len(planned), n)
	}
	key := rollout.Key(events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"})
	waiting, release := make(chan struct{}), make(chan struct{})
	controller.HoldWrites(e.Ro, key, time.Millisecond, func(ctx context.Context) {
		close(waiting)
		<-release
	})
	store.calls.Store(0)
	// One pod stays in flight: the rollout does not complete (a write of
	// its own).
	first, rest, left := map[string]events.Plan{}, map[string]events.Plan{}, ""
	for name, p := range planned {
		switch {
		case left == "":
			left = name
		case len(first) == 0:
			first[name] = p
		default:
			rest[name] = p
		}
	}
	firstDone := e.succeedAtOnce(first)
	wrote := make(chan struct{})
	go func() { firstDone(); close(wrote) }()
	select { // the first outcome's writer waits, or (without the spacing) has written
	case <-waiting:
	case <-wrote:
	}
	restDone := e.succeedAtOnce(rest)
	err := world.Eventually(t.Context(), 30*time.Second, "every outcome queued", func(context.Context) (bool, error) {
		select {
		case <-wrote:
			return true, nil
		default:
		}
		return controller.QueuedWrites(e.Ro, key) == n-1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	<-wrote
	restDone()
	if calls := store.calls.Load(); calls != 1 {
		t.Errorf("%d outcomes arriving one after the other made %d record writes; want 1", n-1, calls)
	}
	for _, p := range e.State("Deployment", "web").Pods {
		if want := rollout.Succeeded; p.Name == left && p.State != rollout.InFlight || p.Name != left && p.State != want {
			t.Errorf("pod %s is %s; want Succeeded (InFlight: %s)", p.Name, p.State, left)
		}
	}
}
