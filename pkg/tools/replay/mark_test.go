package replay

import (
	"context"
	"errors"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
)

func pushed(t *testing.T) cloudevents.Event {
	t.Helper()
	e := cloudevents.NewEvent()
	e.SetID("push-1")
	e.SetSource("test")
	e.SetType(events.ImagePushed)
	if err := e.SetData(cloudevents.ApplicationJSON, events.ImagePushedData{Registry: "reg.example", Repository: "app", Tag: "v2", Origin: "distribution"}); err != nil {
		t.Fatal(err)
	}
	return e
}

// A replayed copy has an id of its own, the same for the same replay, and
// names the replay; only a copy asked to start rollouts says so. The
// original is left as it was.
func TestMark(t *testing.T) {
	e := pushed(t)
	a, again, other := Mark(e, "r1", false), Mark(e, "r1", false), Mark(e, "r2", true)
	if a.ID() == e.ID() || a.ID() != again.ID() || a.ID() == other.ID() {
		t.Errorf("ids: original %s, r1 %s and %s, r2 %s: want r1's own and stable, r2's another", e.ID(), a.ID(), again.ID(), other.ID())
	}
	if got := events.Ext(a, events.ExtReplay); got != "r1" {
		t.Errorf("replay extension %q, want r1", got)
	}
	if got := events.Ext(a, events.ExtReplayStart); got != "" {
		t.Errorf("a copy not asked to start rollouts has %s=%q", events.ExtReplayStart, got)
	}
	if got := events.Ext(other, events.ExtReplayStart); got != "true" {
		t.Errorf("a copy asked to start rollouts has %s=%q, want true", events.ExtReplayStart, got)
	}
	if e.ID() != "push-1" || events.Ext(e, events.ExtReplay) != "" {
		t.Errorf("the original changed: id %s, replay %q", e.ID(), events.Ext(e, events.ExtReplay))
	}
	if diff := cmp.Diff(e.Data(), a.Data()); diff != "" {
		t.Errorf("data (-original +copy):\n%s", diff)
	}
}

func TestTakes(t *testing.T) {
	consumers := map[string][]string{"compute-spec": {events.ImagePushed}, "verify": {events.PodPatched, events.PodUpdated}}
	tests := []struct {
		fn, typ string
		want    bool
	}{
		{"", events.PodUpdated, true},
		{"verify", events.PodPatched, true},
		{"compute-spec", events.PodPatched, false},
		{"", events.ImagePrepulled, false},
		{"pre-pull", events.ImagePushed, false},
	}
	for _, tt := range tests {
		if got := Takes(consumers, tt.fn, tt.typ); got != tt.want {
			t.Errorf("Takes(%q, %s) = %v, want %v", tt.fn, tt.typ, got, tt.want)
		}
	}
}

// MemStore works on a copy of its seed, and an update ends as the real
// bucket's does: ErrNoChange and errors leave the value, an empty first
// value stores nothing.
func TestMemStore(t *testing.T) {
	ctx := context.Background()
	seed := map[string][]byte{"a": []byte("1")}
	m := NewMemStore(seed)
	seed["a"][0] = 'X'
	if v, rev, _ := m.Get(ctx, "a"); string(v) != "1" || rev != 1 {
		t.Errorf("Get(a) = %q rev %d, want 1 rev 1 (a copy of the seed)", v, rev)
	}
	if v, rev, _ := m.Get(ctx, "none"); v != nil || rev != 0 {
		t.Errorf("Get(none) = %q rev %d, want nothing rev 0", v, rev)
	}
	boom := errors.New("boom")
	updates := []struct {
		key     string
		fn      func([]byte) ([]byte, error)
		want    string
		wantErr error
	}{
		{"a", func(old []byte) ([]byte, error) { return append(old, '2'), nil }, "12", nil},
		{"a", func([]byte) ([]byte, error) { return nil, bus.ErrNoChange }, "12", nil},
		{"a", func([]byte) ([]byte, error) { return []byte("lost"), boom }, "", boom},
		{"b", func([]byte) ([]byte, error) { return nil, nil }, "", nil},
		{"c", func(old []byte) ([]byte, error) { return []byte("new"), nil }, "new", nil},
	}
	for _, u := range updates {
		got, err := m.Update(ctx, u.key, u.fn)
		if !errors.Is(err, u.wantErr) || string(got) != u.want {
			t.Errorf("Update(%s) = %q, %v; want %q, %v", u.key, got, err, u.want, u.wantErr)
		}
	}
	keys, _ := m.Keys(ctx)
	if diff := cmp.Diff([]string{"a", "c"}, keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if v, _, _ := m.Get(ctx, "a"); string(v) != "12" {
		t.Errorf("a = %q after a failed update, want 12", v)
	}
}
