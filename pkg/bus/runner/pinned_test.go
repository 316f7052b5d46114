package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/test/world"
)

// TestPinnedConsumerDeliversToOneReplicaThenAnother runs one function in
// two replicas (two runners on their own connections to one server) with
// its consumer pinned: every input goes to one replica; when that one
// stops, the other takes the next inputs within the PinnedTTL.
func TestPinnedConsumerDeliversToOneReplicaThenAnother(t *testing.T) {
	s := bustest.Server(t)
	cfg := bustest.Config()
	cfg.PinnedTTL = 3 * time.Second
	replica := func() (*bus.Bus, *fn) {
		b, err := bus.Connect(t.Context(), bustest.Conn(t, s), cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return b, &fn{name: "compute-spec", types: []string{events.ImagePushed},
			handle: func(context.Context, cloudevents.Event, int) ([]cloudevents.Event, error) { return nil, nil }}
	}
	opts := runner.Options{Pinned: map[string]bool{"compute-spec": true}}
	b1, f1 := replica()
	b2, f2 := replica()
	stops := map[*fn]func(){f1: start(t, b1, opts, f1)}
	stops[f2] = start(t, b2, opts, f2)

	publish := func(from, n int) {
		for i := from; i < from+n; i++ {
			if err := b1.Publish(t.Context(), pushedEvent(t, fmt.Sprintf("p-%d", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	const first = 40
	publish(0, first)
	world.Until(t, 10*time.Second, "every input handled", func() bool { return f1.count()+f2.count() == first })
	settled(t, b1, "compute-spec")
	got := []int{f1.count(), f2.count()}
	if got[0] != 0 && got[1] != 0 {
		t.Fatalf("inputs handled by each replica = %v; a pinned consumer delivers to one", got)
	}
	pinnedTo, other := f1, f2
	if got[0] == 0 {
		pinnedTo, other = f2, f1
	}
	stops[pinnedTo]()
	before := pinnedTo.count()
	publish(first, 5)
	world.Until(t, 3*cfg.PinnedTTL, "the other replica handles the next inputs", func() bool { return other.count() == 5 })
	if pinnedTo.count() != before {
		t.Errorf("the stopped replica handled %d more inputs", pinnedTo.count()-before)
	}
}
