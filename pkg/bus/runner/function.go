package runner

import (
	"context"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// Function is one step of the chain: it takes events of some types and
// returns the events it produces. Its error decides the settlement (package
// settle): nil, retryable, settle.NotYet or settle.Permanent.
type Function interface {
	// Name is the function's name ("compute-spec"); it names its consumer.
	Name() string
	// Types lists the event types it takes.
	Types() []string
	// Handle processes one event. It must be idempotent.
	Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error)
}

// Confirmed is an optional interface of a Function: Published hears of
// the outputs of an input once every one of them is on the stream (each
// publish acknowledged by JetStream), before the input is acked; nothing
// when the handler failed or a publish did. A function may then skip
// returning an output it knows to be on the stream already (the stream
// would drop it as a duplicate anyway).
type Confirmed interface {
	Published(in cloudevents.Event, outs []cloudevents.Event)
}
