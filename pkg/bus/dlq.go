package bus

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers a dead letter carries besides the original message's own.
const (
	HeaderDLQReason     = "Inplace-Dlq-Reason"
	HeaderDLQFunction   = "Inplace-Dlq-Function"
	HeaderDLQDeliveries = "Inplace-Dlq-Deliveries"
	HeaderDLQSubject    = "Inplace-Dlq-Subject"
)

// DeadLetter copies msg, as it was, to the function's dead-letter subject
// with the reason, the original subject and the delivery count. Its
// Nats-Msg-Id is derived from the original's, so a retried dead-lettering
// stores one copy.
func (b *Bus) DeadLetter(ctx context.Context, function string, msg jetstream.Msg, reason string) error {
	out := nats.NewMsg(b.cfg.DLQSubject(function))
	out.Header = nats.Header{}
	for k, v := range msg.Headers() {
		out.Header[k] = append([]string(nil), v...)
	}
	out.Header.Set(HeaderDLQReason, reason)
	out.Header.Set(HeaderDLQFunction, function)
	out.Header.Set(HeaderDLQSubject, msg.Subject())
	if md, err := msg.Metadata(); err == nil {
		out.Header.Set(HeaderDLQDeliveries, strconv.FormatUint(md.NumDelivered, 10))
		out.Header.Set(nats.MsgIdHdr, fmt.Sprintf("dlq-%s-%d", function, md.Sequence.Stream))
	}
	out.Data = msg.Data()
	if _, err := b.js.PublishMsg(ctx, out, jetstream.WithExpectStream(b.cfg.Stream)); err != nil {
		return fmt.Errorf("bus: dead-letter to %s: %w", out.Subject, err)
	}
	return nil
}
