package bus

import (
	"context"
	"fmt"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"
)

// Publish puts e on the stream and waits for the server's ack. Publishing
// an id the stream has seen within its dedup window stores nothing new.
func (b *Bus) Publish(ctx context.Context, e cloudevents.Event) error {
	_, err := b.publish(ctx, e)
	return err
}

// PublishAck is Publish that also says whether the stream dropped e as a duplicate.
func (b *Bus) PublishAck(ctx context.Context, e cloudevents.Event) (duplicate bool, err error) {
	ack, err := b.publish(ctx, e)
	if err != nil {
		return false, err
	}
	return ack.Duplicate, nil
}

func (b *Bus) publish(ctx context.Context, e cloudevents.Event) (*jetstream.PubAck, error) {
	msg, err := Encode(ctx, b.cfg.Subject(e.Type()), e)
	if err != nil {
		return nil, err
	}
	ack, err := b.js.PublishMsg(ctx, msg, jetstream.WithExpectStream(b.cfg.Stream))
	if err != nil {
		return nil, fmt.Errorf("bus: publish %s %s: %w", e.Type(), e.ID(), err)
	}
	return ack, nil
}
