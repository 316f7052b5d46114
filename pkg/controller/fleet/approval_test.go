package fleet

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/events"
	core "github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// startGated runs a controller whose policy makes prod wait for an
// approver.
func (h *hub) startGated() *Controller {
	h.t.Helper()
	p := policy()
	p.Stages[1].Approval = true
	c, err := New(Options{Store: h.store, Policy: p, Log: slog.New(slog.DiscardHandler),
		Release: Publisher{Publish: func(ctx context.Context, m *nats.Msg) error {
			_, err := h.js.PublishMsg(ctx, m)
			return err
		}}})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.t.Context())
	done := make(chan struct{}, 2)
	go func() { _ = c.Run(ctx); done <- struct{}{} }()
	go func() { _ = c.Consume(ctx, h.reports, "fleet-controller"); done <- struct{}{} }()
	h.t.Cleanup(func() { cancel(); <-done; <-done })
	return c
}

// TestApprovalOfAStage: prod waits for an approver once staging is done;
// an approval written to the bucket (as `inplace fleet approve` does)
// releases it, a rejection halts the fleet with production never sent the
// push; a verdict on a stage that is not waiting for one is refused.
func TestApprovalOfAStage(t *testing.T) {
	for _, tc := range []struct {
		verdict string
		want    func(*core.Record) bool
	}{
		{core.Pass, released("prod")},
		{core.Fail, func(r *core.Record) bool { return r.Halt != nil && r.Halt.Reason == "ApprovalRejected" }},
	} {
		t.Run(tc.verdict, func(t *testing.T) {
			h := newHub(t)
			c := h.startGated()
			if err := c.Begin(t.Context(), push(t)); err != nil {
				t.Fatal(err)
			}
			h.until("staging released", released("staging"))
			err := h.store.Approval(t.Context(), "push-1", "staging", core.Gate{Verdict: tc.verdict, By: "alice"})
			if !errors.Is(err, core.ErrNotApprovable) || !strings.Contains(err.Error(), "asks for no approval") {
				t.Errorf("a verdict on staging: %v", err)
			}
			h.report("staging", "done-staging", events.RolloutCompleted, t0, events.Counts{Pods: 1, Succeeded: 1})
			h.until("prod awaiting approval", func(r *core.Record) bool {
				return core.Decide(r).Stages[1].State == core.AwaitingApproval
			})
			if n := h.sent("prod-eu") + h.sent("prod-us"); n != 0 {
				t.Fatalf("prod was sent %d pushes before its approval", n)
			}
			if err := h.store.Approval(t.Context(), "push-1", "prod", core.Gate{Verdict: tc.verdict, By: "alice"}); err != nil {
				t.Fatal(err)
			}
			r := h.until("the verdict taken", tc.want)
			if tc.verdict == core.Fail {
				if _, ok := r.Released["prod"]; ok || h.sent("prod-eu")+h.sent("prod-us") != 0 {
					t.Error("prod was released after a rejection")
				}
			}
			other := map[string]string{core.Pass: core.Fail, core.Fail: core.Pass}[tc.verdict]
			if err := h.store.Approval(t.Context(), "push-1", "prod", core.Gate{Verdict: other, By: "bob"}); !errors.Is(err, core.ErrNotApprovable) {
				t.Errorf("the other verdict after %s: %v", tc.verdict, err)
			}
		})
	}
}

// TestBeginRefusesForGood: a push that can never be begun is a permanent
// error (the hub's runner terminates it and dead-letters a copy); nothing
// is recorded.
func TestBeginRefusesForGood(t *testing.T) {
	h := newHub(t)
	c, _ := h.start()
	good := push(t)
	badID := good.Clone()
	badID.SetID("a b")
	badType := good.Clone()
	badType.SetType(events.RolloutCompleted)
	badData := good.Clone()
	if err := badData.SetData("application/json", map[string]string{"tag": ""}); err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]cloudevents.Event{"id": badID, "type": badType, "data": badData} {
		if err := c.Begin(t.Context(), e); !errors.Is(err, settle.ErrPermanent) {
			t.Errorf("a push with a bad %s: %v, want a permanent error", name, err)
		}
	}
	if rs, err := h.store.List(t.Context()); err != nil || len(rs) != 0 {
		t.Errorf("records %v, %v; want none", rs, err)
	}
}
