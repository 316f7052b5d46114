package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	core "github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// PromoteSubject is where the hub sends a member the push its stage
// starts with: fleet.<cluster>.promote.push (the member's leaf identity
// receives fleet.<cluster>.promote.> and nothing of another member's).
func PromoteSubject(cluster string) string { return "fleet." + cluster + ".promote.push" }

// ReportSubjects are every member's rollout outcomes on the hub.
const ReportSubjects = "fleet.*.rollout.>"

// Publisher releases a push by publishing it (CloudEvents binary mode,
// Nats-Msg-Id the release's id) on PromoteSubject with Publish: a
// JetStream publish that waits for the stream's ack, or a core publish.
type Publisher struct {
	Publish func(ctx context.Context, m *nats.Msg) error
}

var _ Releaser = Publisher{}

// Release implements Releaser.
func (p Publisher) Release(ctx context.Context, cluster, msgID string, push cloudevents.Event) error {
	m, err := bus.Encode(ctx, PromoteSubject(cluster), push)
	if err != nil {
		return err
	}
	m.Header.Set(nats.MsgIdHdr, msgID)
	return p.Publish(ctx, m)
}

// StreamPublisher releases through the hub's JetStream: a publish that
// returns once the hub's fleetnet.PromoteStream stored the release (a
// release published again under its message id is a duplicate it acks
// too), from which each member's InStream sources its own, so a member
// cut off at that moment takes it when it returns. An error (no ack in
// time) leaves the stage unreleased: the controller publishes again after
// its back-off.
func StreamPublisher(js jetstream.JetStream) Publisher {
	return Publisher{Publish: func(ctx context.Context, m *nats.Msg) error {
		_, err := js.PublishMsg(ctx, m, jetstream.WithExpectStream(fleetnet.PromoteStream))
		return err
	}}
}

// ReportCluster is the cluster a report's subject names
// (fleet.<cluster>.rollout.<verb>), or "" for another subject.
func ReportCluster(subject string) string {
	t := strings.Split(subject, ".")
	if len(t) != 4 || t[0] != "fleet" || t[2] != "rollout" || t[1] == "" {
		return ""
	}
	return t[1]
}

// HandleReport takes one message from a member's report subject. A
// message that can never be taken (not a report subject, not a
// CloudEvent, refused) is a permanent error; a report of no push on record
// is ignored.
func (c *Controller) HandleReport(ctx context.Context, subject string, h nats.Header, data []byte) error {
	cluster := ReportCluster(subject)
	if cluster == "" {
		return fmt.Errorf("fleet report: subject %q is not fleet.<cluster>.rollout.<verb>: %w", subject, core.ErrRefused)
	}
	e, err := bus.Decode(ctx, subject, h, data)
	if err != nil {
		return err
	}
	err = c.Report(ctx, cluster, e)
	if errors.Is(err, core.ErrNotThisPush) {
		c.o.Log.Debug("fleet: a report of no push on record", "cluster", cluster, "event", e.ID())
		return nil
	}
	return err
}

// Consume takes the members' reports from stream (the hub's stream of
// every member's outcomes) through a durable consumer, so reports that
// arrived while the controller was down are taken when it returns. A
// refused report is acked and logged; a failure is redelivered.
func (c *Controller) Consume(ctx context.Context, stream jetstream.Stream, durable string) error {
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: durable,
		FilterSubject: ReportSubjects, AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		return fmt.Errorf("fleet consume: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		err := c.HandleReport(ctx, m.Subject(), m.Headers(), m.Data())
		permanent := errors.Is(err, core.ErrRefused) || errors.Is(err, settle.ErrPermanent)
		if err != nil && !permanent && ctx.Err() == nil {
			c.o.Log.Warn("fleet: report not taken; again later", "subject", m.Subject(), "err", err)
			_ = m.Nak()
			return
		}
		if err != nil {
			c.o.Log.Warn("fleet: report refused", "subject", m.Subject(), "err", err)
		}
		_ = m.Ack()
	})
	if err != nil {
		return fmt.Errorf("fleet consume: %w", err)
	}
	<-ctx.Done()
	cc.Stop()
	return nil
}
