package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
)

// Extension attributes a JSON line carries besides the event's own. They
// say where the event sat in the stream; import removes them before it
// publishes, so a re-imported event is the event that was exported.
// CloudEvents integers are 32-bit, so the sequence is a string.
const (
	// ExtSeq is the stream sequence, in decimal.
	ExtSeq = "inplaceseq"
	// ExtStored is when the stream stored it, RFC 3339 with nanoseconds, UTC.
	ExtStored = "inplacestored"
	// ExtDLQFunction and ExtDLQReason mark a dead letter (tail --dlq -o json).
	ExtDLQFunction = "inplacedlqfunction"
	ExtDLQReason   = "inplacedlqreason"
)

var recordExts = []string{ExtSeq, ExtStored, ExtDLQFunction, ExtDLQReason}

// MarshalLine is r as one line of JSON: the event in CloudEvents structured
// mode, with the stream position (and, for a dead letter, its function and
// reason) as extension attributes. No trailing newline.
func MarshalLine(r Record) ([]byte, error) {
	if r.Err != nil {
		return nil, fmt.Errorf("record %d on %s: %w", r.Seq, r.Subject, r.Err)
	}
	e := r.Event.Clone()
	if r.Seq != 0 {
		e.SetExtension(ExtSeq, strconv.FormatUint(r.Seq, 10))
	}
	if !r.Stored.IsZero() {
		e.SetExtension(ExtStored, r.Stored.UTC().Format(time.RFC3339Nano))
	}
	if r.Dead != nil {
		e.SetExtension(ExtDLQFunction, r.Dead.Function)
		e.SetExtension(ExtDLQReason, r.Dead.Reason)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("marshal event %s: %w", e.ID(), err)
	}
	return b, nil
}

// ParseLine reads a line written by MarshalLine (or any structured-mode
// CloudEvent). The stream extensions move back into the Record and are
// removed from the event.
func ParseLine(line []byte) (Record, error) {
	var e cloudevents.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Record{}, fmt.Errorf("not a CloudEvent in JSON: %w", err)
	}
	var r Record
	if s := events.Ext(e, ExtSeq); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Record{}, fmt.Errorf("extension %s=%q: not a sequence number", ExtSeq, s)
		}
		r.Seq = n
	}
	if s := events.Ext(e, ExtStored); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return Record{}, fmt.Errorf("extension %s=%q: not an RFC 3339 time", ExtStored, s)
		}
		r.Stored = t
	}
	if fn := events.Ext(e, ExtDLQFunction); fn != "" {
		r.Dead = &DeadLetter{Function: fn, Reason: events.Ext(e, ExtDLQReason)}
	}
	for _, x := range recordExts {
		e.SetExtension(x, nil)
	}
	r.Event = e
	return r, nil
}

// ErrDeadLetter: a dead letter is not imported; republishing it would feed
// a poisoned event back into the chain.
var ErrDeadLetter = errors.New("a dead letter; import does not republish dead letters")

// CheckImport says whether r may be published again: a valid event of a
// type inplace emits, not a dead letter.
func CheckImport(r Record) error {
	if r.Dead != nil {
		return ErrDeadLetter
	}
	switch r.Event.Type() {
	case events.CDServiceUpgraded, events.CDServiceRolledBack:
		// Emitted by compute-spec for CD tools; nothing in the chain reads it.
		if err := r.Event.Validate(); err != nil {
			return fmt.Errorf("event %s: %w", r.Event.Type(), err)
		}
		return nil
	}
	return events.Check(r.Event)
}
