package bus_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
)

func plannedEvent(b *testing.B, i int) cloudevents.Event {
	b.Helper()
	plan := events.Plan{UpgradeID: "u-bench", Pod: events.PodRef{Namespace: "shop", Name: fmt.Sprintf("web-%d", i), UID: fmt.Sprint("uid-", i), Node: "node-1"},
		Owner: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}, Target: "r.example/shop/web:1.3.0",
		Containers: []events.ContainerPlan{{Name: "app", FromImage: "r.example/shop/web:1.2.0", ToImage: "r.example/shop/web:1.3.0"}}}
	e, err := events.New(fmt.Sprint("id-", i), events.UpgradePlanned, events.Source("bench"), plan.Pod.String(), plan)
	if err != nil {
		b.Fatal(err)
	}
	e.SetExtension(events.ExtUpgradeID, "u-bench")
	return e
}

// BenchmarkCodec: encode a CloudEvent in binary mode and decode it back,
// with the data decoded and validated as a handler does.
func BenchmarkCodec(b *testing.B) {
	e := plannedEvent(b, 1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, err := bus.Encode(ctx, "inplace.upgrade.planned", e)
		if err != nil {
			b.Fatal(err)
		}
		back, err := bus.Decode(ctx, msg.Subject, msg.Header, msg.Data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := events.As[events.Plan](back); err != nil {
			b.Fatal(err)
		}
	}
}

type countFn struct{ n atomic.Int64 }

func (c *countFn) Name() string    { return "count" }
func (c *countFn) Types() []string { return []string{events.UpgradePlanned} }
func (c *countFn) Handle(context.Context, cloudevents.Event) ([]cloudevents.Event, error) {
	c.n.Add(1)
	return nil, nil
}

// BenchmarkBusThroughput: events published on a real JetStream stream (file
// storage) and handled by the runner (decode, normalise, handle, ack).
func BenchmarkBusThroughput(b *testing.B) {
	const n = 5000
	bs := bustest.New(b, nil)
	fn := &countFn{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := runner.New(bs, runner.Options{Workers: 8}, fn)
	go func() { _ = r.Run(ctx) }()
	for !r.Ready() {
		time.Sleep(10 * time.Millisecond)
	}
	evs := make([]cloudevents.Event, n)
	for i := range evs {
		evs[i] = plannedEvent(b, i)
	}
	b.ResetTimer()
	var pub, total time.Duration
	for range b.N {
		fn.n.Store(0)
		start := time.Now()
		for i := range evs {
			evs[i].SetID(fmt.Sprintf("%d-%d", start.UnixNano(), i))
			if err := bs.Publish(ctx, evs[i]); err != nil {
				b.Fatal(err)
			}
		}
		pub += time.Since(start)
		for fn.n.Load() < n {
			time.Sleep(time.Millisecond)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/pub.Seconds(), "published/s")
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "handled/s")
}
