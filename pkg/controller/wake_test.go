package controller_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// A wake-up plans the next pod as soon as the cache shows the in-flight
// one Ready with its upgrade done, before its outcome is recorded; the
// pod stays in flight until then.
func TestWakePlansOnceTheInFlightPodShowsItsUpgradeDone(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	first := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(first) != 1 {
		t.Fatalf("first wave planned %d pods; want 1", len(first))
	}
	outs, err := e.Ro.Wake(t.Context(), ref)
	if err != nil || len(controllertest.Plans(t, outs)) != 0 {
		t.Fatalf("a wake-up with the budget taken planned %d pods (%v); want none", len(controllertest.Plans(t, outs)), err)
	}
	var done string
	for name, p := range first {
		done = name
		e.Upgraded(p)
	}
	e.Cached(ref, 2)
	outs, err = e.Ro.Wake(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	next := controllertest.Plans(t, outs)
	if _, again := next[done]; len(next) != 1 || again {
		t.Fatalf("the wake-up planned %v; want the other pod", next)
	}
	if s := e.State("Deployment", "web").Pods[done].State; s != rollout.InFlight {
		t.Errorf("%s is %s; want InFlight until its outcome is recorded", done, s)
	}
}
