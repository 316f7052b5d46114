package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
	"github.com/inplace-dev/inplace/test/knative"
)

// startKnative runs the chain in Knative mode: Knative Eventing's own
// components on the world, config/overlays/knative created, each Knative
// Service an `inplace function` process behind the real Broker.
func (sh *shop) startKnative(ctx context.Context) (func(), error) {
	fmt.Fprintln(sh.out, "▶ starting Knative Eventing on the world: controller, MT Broker, ingress, filter, in-memory channel, ApiServerSource adapter")
	n, err := knative.Start(ctx, sh.w, knative.Options{})
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(sh.out, "▶ creating config/overlays/knative: the Broker, four function services and the receiver (each an `inplace function` process), their Triggers, the ApiServerSource on pods")
	p, err := knative.StartProject(ctx, n, knative.ProjectOptions{})
	if err != nil {
		n.Stop()
		return nil, fmt.Errorf("%w\n%s", err, n.Logs(20))
	}
	fmt.Fprintf(sh.out, "  Knative Eventing %s, Broker at %s, receiver at %s; no pod watcher runs\n", n.Version(), p.Broker, p.HooksURL)
	sh.kn = p
	return func() { p.Stop(); n.Stop() }, nil
}

// apiServerSource are the adapter's event types, shown as a count.
func apiServerSource(e cloudevents.Event) bool {
	return strings.HasPrefix(e.Type(), "dev.knative.apiserver.")
}

// tailKnative prints what the Broker carries (the recorder's Trigger), until stop.
func (sh *shop) tailKnative() (done <-chan struct{}, stop func()) {
	var mu sync.Mutex
	stopped, hidden := false, 0
	sh.kn.Recorder.Follow(func(e cloudevents.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case stopped:
		case apiServerSource(e):
			hidden++
		default:
			fmt.Fprintln(sh.out, "  "+history.Line(history.Record{Event: e, Stored: time.Now()}, time.Local))
		}
	})
	ch := make(chan struct{})
	return ch, func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		fmt.Fprintf(sh.out, "  (%d ApiServerSource pod events to verify not shown)\n", hidden)
		close(ch)
	}
}

// waitKnative waits for both rollouts' outcome through the Broker.
func (sh *shop) waitKnative(ctx context.Context, within time.Duration) ([]events.RolloutData, error) {
	var done []events.RolloutData
	seen := map[string]bool{}
	for len(done) < 2 {
		e, err := sh.kn.Recorder.Wait(ctx, within, "rollout.completed", func(e cloudevents.Event) bool {
			if e.Type() != events.RolloutCompleted && e.Type() != events.RolloutHalted {
				return false
			}
			d, err := events.As[events.RolloutData](e)
			return err == nil && d.Workload.Namespace == shopNS && !seen[d.Workload.Name]
		})
		if err != nil {
			return done, err
		}
		d, _ := events.As[events.RolloutData](e)
		if e.Type() == events.RolloutHalted {
			return done, fmt.Errorf("rollout of %s halted: %s: %s", d.Workload, d.Reason, d.Message)
		}
		seen[d.Workload.Name] = true
		done = append(done, d)
	}
	return done, nil
}

// statusKnative runs `inplace status` on compute-spec's KV: in Knative
// mode the events pass the Broker, not a stream, so there is nothing to
// replay.
func (sh *shop) statusKnative(ctx context.Context) error {
	fmt.Fprintf(sh.out, "\n$ inplace status --all   (rollout state in compute-spec's NATS KV; in Knative mode events pass the Broker, so no replay)\n")
	out, err := runCLI(ctx, "status", "--all", "--nats-url", sh.kn.NATS.URL())
	fmt.Fprint(sh.out, out)
	if err != nil {
		return errors.Join(err, errors.New(out))
	}
	return nil
}
