package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// Source returns the CloudEvents source of events a function emits.
func Source(function string) string { return "/inplace/" + function }

// DeriveID is the ID of an event made from an input: the same input always
// yields the same ID, so a redelivered input republishes identical IDs and
// the stream's dedup window drops them.
func DeriveID(inputID, outType, key string) string {
	h := sha256.New()
	for _, s := range []string{inputID, outType, key} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// New builds a root event (one not made from another event, such as a
// webhook delivery) with the given id. data is encoded as JSON.
func New(id, typ, source, subject string, data any) (cloudevents.Event, error) {
	e := cloudevents.NewEvent()
	e.SetID(id)
	e.SetType(typ)
	e.SetSource(source)
	e.SetSubject(subject)
	e.SetTime(time.Now().UTC())
	if err := e.SetData(cloudevents.ApplicationJSON, data); err != nil {
		return e, fmt.Errorf("event %s: encode data: %w", typ, err)
	}
	e.SetExtension(ExtTraceParent, rootTraceParent(id))
	if err := e.Validate(); err != nil {
		return e, fmt.Errorf("event %s: %w", typ, err)
	}
	return e, nil
}

// Derive builds an output event of in. Its ID is DeriveID(in.ID(), typ, key),
// where key tells apart several outputs of one type (a pod name, a wave).
// The upgrade id, trace (as a child span) and replay marker are carried over.
func Derive(in cloudevents.Event, typ, source, key, subject string, data any) (cloudevents.Event, error) {
	return Follow(in, DeriveID(in.ID(), typ, key), typ, source, subject, data)
}

// Follow builds an output event of in with an id chosen by the caller: for
// outputs that mean "this pod's upgrade reached a state", whose id must not
// depend on which input led there (DeriveID(upgradeID+"/"+podUID, typ, "")).
// Extensions are carried as by Derive. The outputs of a replayed input get
// ids of their own (folding in the replay's name), so they neither collide
// with the originals in the stream's dedup window nor pass for them.
func Follow(in cloudevents.Event, id, typ, source, subject string, data any) (cloudevents.Event, error) {
	if r := Ext(in, ExtReplay); r != "" {
		id = DeriveID(id, "replay", r)
	}
	out, err := New(id, typ, source, subject, data)
	if err != nil {
		return out, err
	}
	if v := Ext(in, ExtUpgradeID); v != "" {
		out.SetExtension(ExtUpgradeID, v)
	}
	if v := Ext(in, ExtReplay); v != "" {
		out.SetExtension(ExtReplay, v)
	}
	out.SetExtension(ExtTraceParent, childTraceParent(Ext(in, ExtTraceParent), in.ID(), id))
	return out, nil
}

// Ext returns a string extension of e, or "".
func Ext(e cloudevents.Event, name string) string {
	v, ok := e.Extensions()[name]
	if !ok {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// UpgradeID returns the upgradeid extension of e, or "".
func UpgradeID(e cloudevents.Event) string { return Ext(e, ExtUpgradeID) }

// As decodes and validates the data of e. Any failure is permanent and names
// the field: a malformed event will not get better by retrying.
func As[T Validator](e cloudevents.Event) (T, error) {
	var v T
	if ct := e.DataContentType(); ct != "" && ct != cloudevents.ApplicationJSON && ct != "text/json" {
		return v, permanent(e.Type(), fieldErr("datacontenttype", fmt.Sprintf("%q is not application/json", ct)))
	}
	if len(e.Data()) == 0 {
		return v, permanent(e.Type(), fieldErr("data", "required"))
	}
	if err := json.Unmarshal(e.Data(), &v); err != nil {
		return v, permanent(e.Type(), decodeErr(err))
	}
	if err := v.Validate(); err != nil {
		return v, permanent(e.Type(), err)
	}
	return v, nil
}

func decodeErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fieldErr("data."+te.Field, fmt.Sprintf("cannot hold a JSON %s", te.Value))
	}
	return fieldErr("data", "invalid JSON: "+err.Error())
}
