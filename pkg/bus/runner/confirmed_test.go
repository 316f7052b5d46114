package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/world"
)

// confirmedFn is fn with runner.Confirmed: it records what Published hears.
type confirmedFn struct {
	*fn
	mu        sync.Mutex
	published []string // "input id -> output id"
}

func (c *confirmedFn) Published(in cloudevents.Event, outs []cloudevents.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range outs {
		c.published = append(c.published, in.ID()+" -> "+o.ID())
	}
}

func (c *confirmedFn) heard() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.published...)
}

var _ runner.Confirmed = (*confirmedFn)(nil)

// Published hears of a delivery's outputs once they are on the stream;
// not of a delivery that failed (its outputs were never published), nor
// of one with no outputs.
func TestPublishedHearsOfOutputsOnTheStream(t *testing.T) {
	b := bustest.New(t, nil)
	var mu sync.Mutex
	tries := map[string]int{}
	f := &confirmedFn{fn: &fn{name: "verify", types: []string{events.ImagePushed},
		handle: func(_ context.Context, in cloudevents.Event, _ int) ([]cloudevents.Event, error) {
			mu.Lock()
			tries[in.ID()]++
			n := tries[in.ID()]
			mu.Unlock()
			if in.ID() == "quiet" {
				return nil, nil
			}
			out, err := events.Derive(in, events.RolloutResumed, events.Source("verify"), "k", "s",
				events.ResumeData{Workload: events.ObjectRef{Kind: "Deployment", Namespace: "n", Name: "w"}})
			if err == nil && n == 1 {
				err = settle.NotYet(100*time.Millisecond, "not yet")
			}
			return []cloudevents.Event{out}, err
		}}}
	start(t, b, runner.Options{}, f)
	for _, id := range []string{"quiet", "fails-once"} {
		if err := b.Publish(t.Context(), pushedEvent(t, id)); err != nil {
			t.Fatal(err)
		}
	}
	settled(t, b, "verify")
	world.Until(t, 10*time.Second, "two deliveries handled", func() bool { return f.count() >= 3 })
	want := events.DeriveID("fails-once", events.RolloutResumed, "k")
	got := f.heard()
	if len(got) != 1 || got[0] != "fails-once -> "+want {
		t.Errorf("Published heard %v; want once, of fails-once's output %s after its second delivery", got, want)
	}
}
