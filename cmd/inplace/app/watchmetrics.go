package app

import (
	"context"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/kube/watcher"
)

// countedPublisher publishes the pod watcher's events and counts them by
// type, and those the stream dropped as duplicates of one it had (another
// replica's watcher, or a relist, published the same pod state).
type countedPublisher struct {
	b                     *bus.Bus
	published, duplicates *prometheus.CounterVec
}

var _ watcher.Publisher = countedPublisher{}

// watcherPublisher is b counted on reg (nil: b alone).
func watcherPublisher(b *bus.Bus, reg prometheus.Registerer) watcher.Publisher {
	if reg == nil {
		return b
	}
	c := countedPublisher{b: b,
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Name: "pod_watcher_published_total",
			Help: "Events the pod watcher published, by event type.",
		}, []string{"type"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Name: "pod_watcher_duplicate_total",
			Help: "Events of the pod watcher the stream dropped as duplicates of one it had, by event type.",
		}, []string{"type"}),
	}
	if err := reg.Register(c.published); err != nil {
		return b
	}
	if err := reg.Register(c.duplicates); err != nil {
		return b
	}
	return c
}

func (c countedPublisher) Publish(ctx context.Context, e cloudevents.Event) error {
	dup, err := c.b.PublishAck(ctx, e)
	if err != nil {
		return err
	}
	c.published.WithLabelValues(events.Short(e.Type())).Inc()
	if dup {
		c.duplicates.WithLabelValues(events.Short(e.Type())).Inc()
	}
	return nil
}
