package bus_test

import (
	"errors"
	"testing"

	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

// An update from the value the caller wrote last makes no read when the
// key still holds it, and reads the key again when another writer moved
// it on: fn then gets the current value, never the stale one.
func TestUpdateFromTheLastWriteReadsOnlyWhenMovedOn(t *testing.T) {
	kv, err := bustest.New(t, nil).KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const key = "Deployment/shop/web"
	set := func(v string) func([]byte) ([]byte, error) {
		return func([]byte) ([]byte, error) { return []byte(v), nil }
	}
	mine, rev, err := kv.UpdateRevision(t.Context(), key, set("1"))
	if err != nil {
		t.Fatal(err)
	}
	var saw []string
	appendTo := func(old []byte) ([]byte, error) {
		saw = append(saw, string(old))
		return append(append([]byte{}, old...), '+'), nil
	}
	reads := kv.Reads()
	mine, rev, err = kv.UpdateRevisionFrom(t.Context(), key, mine, rev, appendTo)
	if err != nil {
		t.Fatal(err)
	}
	if n := kv.Reads() - reads; n != 0 || string(mine) != "1+" {
		t.Errorf("an update from the key's own value read it %d times and wrote %q; want no read, 1+", n, mine)
	}
	if _, err := kv.Update(t.Context(), key, set("theirs")); err != nil { // another writer
		t.Fatal(err)
	}
	saw = nil
	got, _, err := kv.UpdateRevisionFrom(t.Context(), key, mine, rev, appendTo)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "theirs+" || saw[len(saw)-1] != "theirs" {
		t.Errorf("an update from a stale value wrote %q (fn saw %q); want theirs+, from the current value", got, saw)
	}
	if v, _, _ := kv.Get(t.Context(), key); string(v) != "theirs+" {
		t.Errorf("stored %q; want theirs+", v)
	}
}

// fn's refusal of the caller's value is asked again of the key as it is:
// the caller's value may be stale, and a refusal on it is no answer.
func TestUpdateFromAStaleValueAsksARefusalAgain(t *testing.T) {
	kv, err := bustest.New(t, nil).KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const key = "Deployment/shop/web"
	mine, rev, err := kv.UpdateRevision(t.Context(), key, func([]byte) ([]byte, error) { return []byte("u-1"), nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Update(t.Context(), key, func([]byte) ([]byte, error) { return []byte("u-2"), nil }); err != nil {
		t.Fatal(err)
	}
	onlyU2 := func(old []byte) ([]byte, error) {
		if string(old) != "u-2" {
			return nil, errors.New("not u-2")
		}
		return []byte("u-2 done"), nil
	}
	got, _, err := kv.UpdateRevisionFrom(t.Context(), key, mine, rev, onlyU2)
	if err != nil || string(got) != "u-2 done" {
		t.Errorf("update from a stale value = %q, %v; want u-2 done (fn asked again on the current value)", got, err)
	}
}
