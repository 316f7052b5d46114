package fntest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Handler is a function's Handle.
type Handler func(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error)

// Event makes an input event of typ with data, as the function before in
// the chain would (upgradeid set).
func Event(t testing.TB, id, typ, upgradeID, subject string, data any) cloudevents.Event {
	t.Helper()
	e, err := events.New(id, typ, events.Source("test"), subject, data)
	if err != nil {
		t.Fatal(err)
	}
	if upgradeID != "" {
		e.SetExtension(events.ExtUpgradeID, upgradeID)
	}
	return e
}

// Result is what driving a handler to a settlement saw.
type Result struct {
	Outs []cloudevents.Event
	// NotYet counts the "not yet" answers before the last call.
	NotYet int
	Err    error
}

// Drive calls h with e until it answers something other than "not yet",
// waiting the asked delay (capped at a second) between calls, as the
// runner's NakWithDelay would; a retryable error is retried too, a few
// times. It fails the test after Timeout.
func Drive(t testing.TB, h Handler, e cloudevents.Event) Result {
	t.Helper()
	return DriveUntil(t, h, e, func(Result) bool { return false })
}

// DriveUntil is Drive that also stops, after a "not yet", when stop says so.
func DriveUntil(t testing.TB, h Handler, e cloudevents.Event, stop func(Result) bool) Result {
	t.Helper()
	var r Result
	retries := 0
	deadline := time.Now().Add(Timeout)
	for time.Now().Before(deadline) {
		outs, err := h(t.Context(), e)
		kind, delay := settle.Classify(err)
		switch {
		case kind == settle.Later:
			r.NotYet++
			if stop(r) {
				r.Err = err
				return r
			}
			time.Sleep(min(delay, time.Second))
			continue
		case kind == settle.Retry && retries < 5:
			retries++
			t.Logf("retryable error (again): %v", err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		r.Outs, r.Err = outs, err
		return r
	}
	t.Fatalf("handler still not done after %s (%d not-yets)", Timeout, r.NotYet)
	return r
}

// One returns the only output, checking its type.
func One(t testing.TB, r Result, typ string) cloudevents.Event {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("handler error: %v", r.Err)
	}
	if len(r.Outs) != 1 || r.Outs[0].Type() != typ {
		var data []string
		for _, e := range r.Outs {
			data = append(data, string(e.Data()))
		}
		t.Fatalf("outputs = %v, want one %s; data: %s", typesOf(r.Outs), typ, strings.Join(data, "; "))
	}
	return r.Outs[0]
}

func typesOf(es []cloudevents.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Type())
	}
	return out
}

// Data decodes an event's data.
func Data[T any](t testing.TB, e cloudevents.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Data(), &v); err != nil {
		t.Fatalf("decode %s: %v", e.Type(), err)
	}
	return v
}

// IsNotYet reports a "not yet" answer.
func IsNotYet(err error) bool {
	var ny *settle.NotYetError
	return errors.As(err, &ny)
}
