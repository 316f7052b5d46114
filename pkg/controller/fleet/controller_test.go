package fleet

import (
	"context"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	core "github.com/inplace-dev/inplace/pkg/core/fleet"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// TestPromotesStageByStage: staging first; both production clusters once
// staging's rollout succeeded; done when they succeeded too.
func TestPromotesStageByStage(t *testing.T) {
	h := newHub(t)
	c, _ := h.start()
	if err := c.Begin(t.Context(), push(t)); err != nil {
		t.Fatal(err)
	}
	h.until("staging released", released("staging"))
	if got := []int{h.sent("staging"), h.sent("prod-eu"), h.sent("prod-us")}; !cmp.Equal(got, []int{1, 0, 0}) {
		t.Fatalf("pushes sent to staging, prod-eu, prod-us = %v; want [1 0 0]", got)
	}
	h.report("staging", "done-staging", events.RolloutCompleted, t0, events.Counts{Pods: 2, Succeeded: 2})
	h.until("prod released", released("prod"))
	if got := []int{h.sent("staging"), h.sent("prod-eu"), h.sent("prod-us")}; !cmp.Equal(got, []int{1, 1, 1}) {
		t.Fatalf("pushes sent = %v; want [1 1 1]", got)
	}
	h.report("prod-eu", "done-eu", events.RolloutCompleted, t0, events.Counts{Pods: 2, Succeeded: 2})
	h.report("prod-us", "done-us", events.RolloutCompleted, t0, events.Counts{Pods: 2, Succeeded: 2})
	h.until("every stage done", func(r *core.Record) bool { return core.Decide(r).Done })
}

// TestHaltStopsTheStagesAfter: staging's rollout halts; production is
// never sent the push, and a later success there changes nothing.
func TestHaltStopsTheStagesAfter(t *testing.T) {
	h := newHub(t)
	c, _ := h.start()
	if err := c.Begin(t.Context(), push(t)); err != nil {
		t.Fatal(err)
	}
	h.until("staging released", released("staging"))
	h.report("staging", "halt-staging", events.RolloutHalted, t0, events.Counts{Pods: 2, Failed: 1})
	r := h.until("halted", func(r *core.Record) bool { return r.Halt != nil })
	want := &core.Halt{Stage: "staging", Cluster: "staging", Workload: web.String(), Reason: "RolloutHalted",
		Message: web.String() + " in staging:  ", At: r.Halt.At}
	if diff := cmp.Diff(want, r.Halt); diff != "" {
		t.Errorf("halt (-want +got):\n%s", diff)
	}
	h.report("staging", "done-staging", events.RolloutCompleted, t0.Add(time.Minute), events.Counts{Pods: 2, Succeeded: 2})
	h.until("the later completion recorded", func(r *core.Record) bool {
		return r.Members["staging"].Rollouts[web.String()].State == core.Succeeded
	})
	if _, ok := h.until("still halted", func(*core.Record) bool { return true }).Released["prod"]; ok {
		t.Error("prod was released after a halt")
	}
	if n := h.sent("prod-eu") + h.sent("prod-us"); n != 0 {
		t.Errorf("production was sent %d pushes after a halt", n)
	}
}

// TestSurvivesARestart: a second controller on the same bucket and
// streams goes on where the first stopped, without sending staging the
// push again, and takes the report that arrived while none ran.
func TestSurvivesARestart(t *testing.T) {
	h := newHub(t)
	c, stop := h.start()
	if err := c.Begin(t.Context(), push(t)); err != nil {
		t.Fatal(err)
	}
	h.until("staging released", released("staging"))
	stop()
	h.report("staging", "done-staging", events.RolloutCompleted, t0, events.Counts{Pods: 1, Succeeded: 1})
	c2, _ := h.start()
	if err := c2.Begin(t.Context(), push(t)); err != nil { // a redelivered push
		t.Fatal(err)
	}
	h.until("prod released by the second controller", released("prod"))
	if got := []int{h.sent("staging"), h.sent("prod-eu"), h.sent("prod-us")}; !cmp.Equal(got, []int{1, 1, 1}) {
		t.Fatalf("pushes sent = %v; want [1 1 1]", got)
	}
}

// TestReportsAreClaims: a success reported on production's subject before
// production was released, and a report on a subject naming no cluster,
// change nothing; staging's own report still promotes.
func TestReportsAreClaims(t *testing.T) {
	h := newHub(t)
	c, _ := h.start()
	if err := c.Begin(t.Context(), push(t)); err != nil {
		t.Fatal(err)
	}
	h.until("staging released", released("staging"))
	h.report("prod-eu", "early-eu", events.RolloutCompleted, t0, events.Counts{Pods: 1, Succeeded: 1})
	h.report("elsewhere", "stranger", events.RolloutCompleted, t0, events.Counts{Pods: 1, Succeeded: 1})
	h.report("staging", "done-staging", events.RolloutCompleted, t0, events.Counts{Pods: 1, Succeeded: 1})
	r := h.until("prod released", released("prod"))
	if diff := cmp.Diff([]string{"staging"}, keys(r.Members)); diff != "" {
		t.Errorf("members with reports (-want +got):\n%s", diff)
	}
	for _, cl := range []string{"prod-eu", "prod-us"} {
		if s := core.Decide(r).Stages[1].State; s != core.Running {
			t.Errorf("prod is %s with %s's early report; want Running", s, cl)
		}
	}
}

// TestReleaseIsIdempotent: the same release published twice is one
// message in a member's inbox.
func TestReleaseIsIdempotent(t *testing.T) {
	h := newHub(t)
	c, _ := h.start()
	for range 2 {
		if err := c.o.Release.Release(t.Context(), "staging", MsgID("push-1", "staging"), push(t)); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.sent("staging"); n != 1 {
		t.Errorf("staging holds %d pushes; want 1", n)
	}
}

// watched is a Releaser that says the outcome of each release.
type watched struct {
	Releaser
	done chan error
}

func (w watched) Release(ctx context.Context, cluster, msgID string, push cloudevents.Event) error {
	err := w.Releaser.Release(ctx, cluster, msgID, push)
	select {
	case w.done <- err:
	default:
	}
	return err
}

// TestAStageIsReleasedOnceTheHubStoredIt: while the hub's stream of
// releases is missing, a release gets no ack: the stage stays unreleased
// and the controller publishes again after its back-off; once the stream
// is there, the next attempt is stored once and the stage recorded
// released.
func TestAStageIsReleasedOnceTheHubStoredIt(t *testing.T) {
	h := newHub(t)
	if err := h.js.DeleteStream(t.Context(), fleetnet.PromoteStream); err != nil {
		t.Fatal(err)
	}
	rel := watched{Releaser: StreamPublisher(h.js), done: make(chan error, 64)}
	c, _ := h.startWith(rel)
	if err := c.Begin(t.Context(), push(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := <-rel.done; err == nil {
			t.Fatalf("release %d without the hub's stream: no error", i+1)
		}
	}
	if r, err := h.store.Get(t.Context(), "push-1"); err != nil || len(r.Released) != 0 {
		t.Fatalf("after two releases without an ack: released %v (%v); want none", r.Released, err)
	}
	h.inbox = h.promotions()
	h.until("staging released", released("staging"))
	if n := h.sent("staging"); n != 1 {
		t.Errorf("staging holds %d pushes; want 1", n)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
