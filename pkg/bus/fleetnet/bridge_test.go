package fleetnet_test

import (
	"context"
	"log/slog"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// TestAReleasedPushRunsOnTheMember: a push the hub releases to member a
// (twice, as after a crash) becomes one image.pushed on a's own bus; a
// release that is not an image.pushed CloudEvent goes nowhere.
func TestAReleasedPushRunsOnTheMember(t *testing.T) {
	ctx := t.Context()
	f := newFleet(t, fleetnet.MemberPerms, "a")
	cfg := bus.DefaultConfig()
	b, err := bus.Connect(ctx, f.memberConn("a"), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	aj := js(t, f.memberConn("a"))
	if err := fleetnet.SetupMember(ctx, aj, fleetnet.Member{Cluster: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fleetnet.SetupHub(ctx, js(t, f.hubConn()), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	bctx, stop := context.WithCancel(ctx)
	go func() { done <- fleetnet.Bridge(bctx, aj, "a", b, slog.New(slog.DiscardHandler)) }()
	defer func() { stop(); <-done }()

	hub := f.hubConn()
	sub := subscribe(t, f.memberConn("a"), fleetnet.PromotePush("a"))
	until(t, "a release reaching member a", sub, func() { publish(t, hub, fleetnet.PromotePush("a"), "not a cloudevent") })
	push, err := events.New("push-1", events.ImagePushed, events.Source("test"), "reg/app:1.1", map[string]string{"tag": "1.1"})
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := events.New("not-a-push", events.RolloutCompleted, events.Source("test"), "Deployment/ns/web", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []cloudevents.Event{wrong, push, push} {
		m, err := bus.Encode(ctx, fleetnet.PromotePush("a"), e)
		if err != nil {
			t.Fatal(err)
		}
		if err := hub.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, hub, fleetnet.PromotePush("a"), "last")
	in, err := aj.Stream(ctx, fleetnet.InStream)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the bridge settling every release", func() bool {
		si, err1 := in.Info(ctx)
		ci, err2 := aj.Consumer(ctx, fleetnet.InStream, fleetnet.BridgeConsumer)
		if err1 != nil || err2 != nil {
			return false
		}
		last, err3 := in.GetLastMsgForSubject(ctx, fleetnet.PromotePush("a"))
		info, err := ci.Info(ctx)
		return err == nil && err3 == nil && string(last.Data) == "last" &&
			info.Delivered.Stream == si.State.LastSeq && info.NumAckPending == 0
	})
	st, err := aj.Stream(ctx, cfg.Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Subject+" "+m.Header.Get(nats.MsgIdHdr))
	}
	if diff := cmp.Diff([]string{cfg.Subject(events.ImagePushed) + " push-1"}, got); diff != "" {
		t.Errorf("member a's bus (-want +got):\n%s", diff)
	}
}
