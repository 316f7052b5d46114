package events

import (
	"context"
	"sync"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

type checkedKey struct{}

// checked is the data decoded from one event, for one taker.
type checked struct {
	id, typ string
	mu      sync.Mutex
	v       any // nil once taken
}

// WithChecked is ctx carrying data, what NormalizeChecked decoded from e,
// for AsIn to take once.
func WithChecked(ctx context.Context, e cloudevents.Event, data any) context.Context {
	if data == nil {
		return ctx
	}
	return context.WithValue(ctx, checkedKey{}, &checked{id: e.ID(), typ: e.Type(), v: data})
}

// AsIn is As, taking the data the transport decoded and checked from e
// when ctx carries it (WithChecked). The first call takes it, so its
// caller owns it as it would a fresh decode; a later call decodes anew.
func AsIn[T Validator](ctx context.Context, e cloudevents.Event) (T, error) {
	if c, ok := ctx.Value(checkedKey{}).(*checked); ok && c.id == e.ID() && c.typ == e.Type() {
		c.mu.Lock()
		v, ok := c.v.(T)
		if ok {
			c.v = nil
		}
		c.mu.Unlock()
		if ok {
			return v, nil
		}
	}
	return As[T](e)
}
