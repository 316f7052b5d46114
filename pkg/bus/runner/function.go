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
