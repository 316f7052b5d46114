package history

import (
	"context"
	"strconv"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/pkg/bus"
)

// Record is one message of the stream: the event and where it sits.
type Record struct {
	// Seq is the stream sequence; 0 for a record read from a file.
	Seq uint64
	// Stored is when the stream stored the message.
	Stored time.Time
	// Subject is the NATS subject it was stored on.
	Subject string
	// Event is the CloudEvent; empty when Err is set.
	Event cloudevents.Event
	// Dead is set for a dead letter (a copy on <prefix>.dlq.<function>).
	Dead *DeadLetter
	// Err says why the message could not be read as a CloudEvent.
	Err error
}

// DeadLetter is what a dead-lettered copy says about its original.
type DeadLetter struct {
	Function   string `json:"function"`
	Reason     string `json:"reason"`
	Subject    string `json:"subject,omitempty"`
	Deliveries int    `json:"deliveries,omitempty"`
}

// Time is when the event happened: its CloudEvents time, else when it was
// stored. A dead letter happened when it was stored (its event's time is
// the original's).
func (r Record) Time() time.Time {
	if r.Dead != nil && !r.Stored.IsZero() {
		return r.Stored
	}
	if t := r.Event.Time(); !t.IsZero() {
		return t
	}
	return r.Stored
}

// FromMsg reads one stream message. A message that is not a CloudEvent
// gives a Record with Err set rather than an error, so a reader can show it
// in its place.
func FromMsg(ctx context.Context, subject string, hdr nats.Header, data []byte, seq uint64, stored time.Time) Record {
	r := Record{Seq: seq, Stored: stored, Subject: subject}
	if reason := hdr.Get(bus.HeaderDLQReason); reason != "" || strings.Contains(subject, ".dlq.") {
		n, _ := strconv.Atoi(hdr.Get(bus.HeaderDLQDeliveries))
		r.Dead = &DeadLetter{
			Function: hdr.Get(bus.HeaderDLQFunction), Reason: reason,
			Subject: hdr.Get(bus.HeaderDLQSubject), Deliveries: n,
		}
		if r.Dead.Function == "" {
			r.Dead.Function = subject[strings.LastIndex(subject, ".")+1:]
		}
	}
	e, err := bus.Decode(ctx, subject, hdr, data)
	if err != nil {
		r.Err = err
		return r
	}
	r.Event = e
	return r
}
