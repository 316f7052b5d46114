package fleetnet

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
)

// BridgeConsumer is the member's durable consumer on InStream that Bridge
// reads.
const BridgeConsumer = "fleet-bridge"

// PromotePush is the subject of a push the hub released to cluster (its
// stage started): the push's image.pushed CloudEvent.
func PromotePush(cluster string) string { return "fleet." + cluster + ".promote.push" }

// Publisher is the member's own bus (bus.Bus): a publish waits for the
// stream's ack and carries the event id as Nats-Msg-Id.
type Publisher interface {
	Publish(ctx context.Context, e cloudevents.Event) error
}

// Bridge moves each push the hub released to cluster (PromotePush, kept in
// InStream) onto the member's own bus as the image.pushed it carries, so
// the member's chain runs it. It reads through BridgeConsumer and acks a
// message only once the member's stream stored the event, so a push
// released while the process was down is taken when it returns, and one
// released twice is one event (its id is the dedup key). A message that
// is not an image.pushed CloudEvent is terminated and logged. It returns
// when ctx ends.
func Bridge(ctx context.Context, js jetstream.JetStream, cluster string, b Publisher, log *slog.Logger) error {
	c, err := js.CreateOrUpdateConsumer(ctx, InStream, jetstream.ConsumerConfig{Durable: BridgeConsumer,
		FilterSubject: PromotePush(cluster), AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
		BackOff: []time.Duration{time.Second, 5 * time.Second, 30 * time.Second}, MaxDeliver: -1})
	if err != nil {
		return fmt.Errorf("fleet bridge %s: consumer: %w", cluster, err)
	}
	cc, err := c.Consume(func(m jetstream.Msg) { bridgeOne(ctx, m, b, log) })
	if err != nil {
		return fmt.Errorf("fleet bridge %s: consume: %w", cluster, err)
	}
	<-ctx.Done()
	cc.Stop()
	return nil
}

func bridgeOne(ctx context.Context, m jetstream.Msg, b Publisher, log *slog.Logger) {
	e, err := decodePush(ctx, m)
	if err != nil {
		log.Warn("fleet bridge: refused a release", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	if err := b.Publish(ctx, e); err != nil {
		log.Warn("fleet bridge: publishing a push on the member's bus", "event", e.ID(), "err", err)
		_ = m.Nak()
		return
	}
	if err := m.Ack(); err != nil {
		log.Warn("fleet bridge: ack", "event", e.ID(), "err", err)
	}
}

// decodePush is the image.pushed a release carries.
func decodePush(ctx context.Context, m jetstream.Msg) (cloudevents.Event, error) {
	e, err := bus.Decode(ctx, m.Subject(), m.Headers(), m.Data())
	if err != nil {
		return e, err
	}
	if e.Type() != events.ImagePushed {
		return e, fmt.Errorf("event %s is a %s, not an image.pushed", e.ID(), e.Type())
	}
	return e, nil
}
