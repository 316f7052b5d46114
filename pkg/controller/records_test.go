package controller_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// A push that finds the workload's previous rollout syncing its template
// waits for that record's change, woken by the watch of the records, and
// then starts at once within the same delivery: no "not yet", no fixed
// recheck. The test holds the record in Syncing, hands the push to
// compute-spec, checks it is still waiting, then records the sync done;
// the push returns its plans.
func TestPushWaitsForTheTemplateSyncFromTheWatch(t *testing.T) {
	e := newEnv(t)
	e.watchRecords()

	v1, _ := e.Image("web", "1.0.0")
	_, d11 := e.Image("web", "1.1.0")
	_, d12 := e.Image("web", "1.2.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", v1)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	if got := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.1.0", d11))); len(got) != 2 {
		t.Fatalf("first push planned %d pods; want 2", len(got))
	}
	e.setPhase(ref, rollout.Syncing, "")

	type result struct {
		outs []cloudevents.Event
		err  error
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		outs, err := e.Fn.Handle(ctx, e.Pushed("push-2", "web", "1.2.0", d12))
		done <- result{outs, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the push returned while the template was syncing: %d events, %v", len(r.outs), r.err)
	case <-time.After(500 * time.Millisecond): // it waits (an ordering check, not a timing one: it may wait any longer)
	}
	e.setPhase(ref, rollout.Completed, controller.SyncDone)
	r := <-done
	if r.err != nil {
		t.Fatalf("push after the sync: %v; want its plans in the same delivery", r.err)
	}
	if got := controllertest.Plans(t, r.outs); len(got) != 2 {
		t.Errorf("push after the sync planned %d pods; want 2", len(got))
	}
	if st := e.State("Deployment", "web"); st.Push.Tag != "1.2.0" || st.Phase != rollout.Running {
		t.Errorf("rollout %s %s; want 1.2.0 running", st.Push.Tag, st.Phase)
	}
}

// watchRecords gives compute-spec the watch of the records, as `inplace
// run` does.
func (e *env) watchRecords() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	records := &controller.RecordChanges{}
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: e.Cache, Store: e.KV, Log: log, Records: records,
		Defaults: config.NewStore(config.StandardDefaults(), log)})
	go func() { _ = e.KV.Watch(e.T.Context(), records.Notify) }()
}

// setPhase writes a rollout record's phase (and sync step), as the worker
// syncing the template would.
func (e *env) setPhase(ref events.ObjectRef, phase rollout.Phase, syncStep string) {
	e.T.Helper()
	_, err := e.KV.Update(e.T.Context(), rollout.Key(ref), func(old []byte) ([]byte, error) {
		var r rollout.Rollout
		if err := json.Unmarshal(old, &r); err != nil {
			return nil, err
		}
		r.Phase = phase
		if syncStep != "" {
			r.Sync = &rollout.Sync{Step: syncStep, Result: events.TemplateSynced}
		}
		return json.Marshal(r)
	})
	if err != nil {
		e.T.Fatal(err)
	}
}

// A resize request that finds the workload's push still rolling out waits
// for that record's change, woken by the watch of the records, and starts
// within the same delivery once the rollout ends: no "not yet" with a
// fixed 2 s recheck.
func TestResizeWaitsForTheRunningRolloutFromTheWatch(t *testing.T) {
	e := newEnv(t)
	e.watchRecords()

	v1, _ := e.Image("web", "1.0.0")
	_, d11 := e.Image("web", "1.1.0")
	app := controllertest.Container("app", v1)
	app.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{app},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	if got := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.1.0", d11))); len(got) != 2 {
		t.Fatalf("the push planned %d pods; want 2", len(got))
	}
	req, err := events.New("resize-1", events.ContainerResizeRequested, events.Source("test"), ref.String(),
		events.ResizeRequestData{Target: ref, Containers: []string{"app"}, CPU: "200m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	type result struct {
		outs []cloudevents.Event
		err  error
	}
	done := make(chan result, 1)
	go func() {
		outs, err := e.Fn.Handle(ctx, req)
		done <- result{outs, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the resize returned while the push was rolling out: %d events, %v", len(r.outs), r.err)
	case <-time.After(500 * time.Millisecond): // it waits (an ordering check, not a timing one)
	}
	e.setPhase(ref, rollout.Completed, controller.SyncDone)
	r := <-done
	if r.err != nil {
		t.Fatalf("resize after the push: %v; want its plans in the same delivery", r.err)
	}
	if got := controllertest.Plans(t, r.outs); len(got) != 2 {
		t.Errorf("the resize planned %d pods; want 2", len(got))
	}
	if st := e.State("Deployment", "web"); st.Resize == nil || st.Phase != rollout.Running {
		t.Errorf("record: resize %v, phase %s; want the resize running", st.Resize, st.Phase)
	}
}
