package bus

import (
	"bytes"
	"context"
	"fmt"

	natsce "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Encode turns e into a NATS message in the CloudEvents NATS binary mode
// (ce-* headers, data as body) on subject, with Nats-Msg-Id = e.ID().
func Encode(ctx context.Context, subject string, e cloudevents.Event) (*nats.Msg, error) {
	var body bytes.Buffer
	hdr, err := natsce.WriteMsg(binding.WithForceBinary(ctx), binding.ToMessage(&e), &body)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", e.ID(), err)
	}
	msg := nats.NewMsg(subject)
	msg.Header = hdr
	msg.Header.Set(nats.MsgIdHdr, e.ID())
	msg.Data = body.Bytes()
	return msg, nil
}

// Decode reads a CloudEvent from a NATS message in binary or structured mode.
// A message that is not a CloudEvent is a permanent error.
func Decode(ctx context.Context, subject string, header nats.Header, data []byte) (cloudevents.Event, error) {
	m := natsce.NewMessage(&nats.Msg{Subject: subject, Header: header, Data: data})
	e, err := binding.ToEvent(ctx, m)
	if err != nil {
		return cloudevents.Event{}, settle.Permanent(fmt.Errorf("decode message on %s: %w", subject, err))
	}
	return *e, nil
}
