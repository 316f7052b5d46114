package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/world"
)

// A "not yet" keeps its message unsettled until it comes back, so a
// function that waits on many pods at once (verify's timer, one per pod in
// flight) parks one message per pod. The scale run has a thousand in
// flight: the next input (the pod.updated that lands a pod) must still be
// delivered at once, not after the parked ones come back. With the
// consumer's MaxAckPending at 256, the 257th message waited.
func TestParkedWaitsDoNotHoldBackTheNextInput(t *testing.T) {
	b := bustest.New(t, nil)
	const parked = 1000
	var woken atomic.Int64
	f := &fn{name: "verify", types: []string{events.ImagePushed},
		handle: func(_ context.Context, e cloudevents.Event, _ int) ([]cloudevents.Event, error) {
			if strings.HasPrefix(e.ID(), "timer-") {
				return nil, settle.NotYet(time.Minute, "the kubelet is still at work")
			}
			woken.Add(1)
			return nil, nil
		}}
	start(t, b, runner.Options{}, f)
	for i := range parked {
		if err := b.Publish(t.Context(), pushedEvent(t, fmt.Sprintf("timer-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	world.Until(t, 30*time.Second, fmt.Sprintf("all %d waits delivered once", parked), func() bool { return f.count() >= parked })
	if err := b.Publish(t.Context(), pushedEvent(t, "wake")); err != nil {
		t.Fatal(err)
	}
	world.Until(t, 10*time.Second, "the input after them delivered", func() bool { return woken.Load() == 1 })
}
