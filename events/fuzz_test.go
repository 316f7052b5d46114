package events

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// The decoders of events are fuzzed like the webhook parsers:
//
//	go test -run='^$' -fuzz=FuzzCheck -fuzztime=60s ./events
//
// Inputs that failed are kept under testdata/fuzz/<target> and run with
// every go test.

// FuzzCheck feeds any type and data to Check (As[T] for every type): it
// never panics, a refusal names a field, and data it accepts survives a
// round trip through JSON and validates again.
func FuzzCheck(f *testing.F) {
	for typ, d := range samples() {
		raw, err := json.Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(typ, raw)
	}
	f.Add(PodUpdated, []byte(`{"pod":{"metadata":{"namespace":"a","name":"b","uid":"c"}}}`))
	f.Add(UpgradePlanned, []byte(`{"upgradeID":"u","pod":{}}`))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		e := cloudevents.NewEvent()
		e.SetID("id-1")
		e.SetSource("/fuzz")
		e.SetType(typ)
		if err := e.SetData(cloudevents.ApplicationJSON, json.RawMessage(data)); err != nil {
			return // not JSON: the SDK refuses it before any decoder
		}
		err := Check(e)
		if err != nil {
			checkFieldError(t, err)
			return
		}
		roundTrip(t, e)
	})
}

// roundTrip: accepted data re-encoded is accepted again.
func roundTrip(t *testing.T, e cloudevents.Event) {
	t.Helper()
	d, ok := samples()[e.Type()]
	if !ok {
		t.Fatalf("Check accepted type %q, which has no sample", e.Type())
	}
	v := newLike(d)
	if err := json.Unmarshal(e.Data(), v); err != nil {
		t.Fatalf("accepted data does not decode: %v", err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("accepted data does not encode: %v", err)
	}
	again := e.Clone()
	if err := again.SetData(cloudevents.ApplicationJSON, json.RawMessage(raw)); err != nil {
		t.Fatal(err)
	}
	if err := Check(again); err != nil {
		t.Fatalf("accepted %s, refused once re-encoded: %v\n%s", e.Type(), err, raw)
	}
}

// FuzzFromAPIServerSource adapts any pod JSON sent by an ApiServerSource:
// no panic, a refusal names a field, and what it accepts is a pod.updated
// that Check accepts.
func FuzzFromAPIServerSource(f *testing.F) {
	for _, name := range []string{"apiserversource_pod_update.json", "pod_running.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"kind":"Pod","metadata":{"namespace":"a","name":"b","uid":"c"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e := cloudevents.NewEvent()
		e.SetID("random-1")
		e.SetSource("https://10.96.0.1:443")
		e.SetType(APIServerSourceUpdate)
		e.SetSubject("/apis/v1/namespaces/a/pods/b")
		if err := e.SetData(cloudevents.ApplicationJSON, json.RawMessage(data)); err != nil {
			return
		}
		out, err := Normalize(e)
		if err != nil {
			checkFieldError(t, err)
			return
		}
		if out.Type() != PodUpdated {
			t.Fatalf("adapted to %s", out.Type())
		}
		if err := Check(out); err != nil {
			t.Fatalf("the adapted event is refused: %v", err)
		}
	})
}

// FuzzImagePushedFromCDEvent reads any CDEvent body: no panic, a refusal
// names a field, and an accepted push is valid.
func FuzzImagePushedFromCDEvent(f *testing.F) {
	for _, name := range []string{"cdevents_artifact_published_v04.json", "cdevents_artifact_published_v05.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := ImagePushedFromCDEvent(body)
		if err != nil {
			checkFieldError(t, err)
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("accepted an invalid push %+v: %v", d, err)
		}
	})
}

// checkFieldError: every refusal names what is wrong.
func checkFieldError(t *testing.T, err error) {
	t.Helper()
	var fe *FieldError
	if !asFieldError(err, &fe) || fe.Field == "" {
		t.Fatalf("error without a field: %v", err)
	}
}

func asFieldError(err error, target **FieldError) bool { return errors.As(err, target) }

// newLike returns a pointer to a new zero value of d's type.
func newLike(d any) any { return reflect.New(reflect.TypeOf(d)).Interface() }
