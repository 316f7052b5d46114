package receiver

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// unknownRoute labels deliveries to routes that do not exist, so that a
// scan of random paths cannot grow the label set.
const unknownRoute = "_unknown"

type metrics struct {
	deliveries *prometheus.CounterVec
	published  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, routes []Route) (*metrics, error) {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Subsystem: "receiver", Name: "deliveries_total",
			Help: "Webhook deliveries by route and result (accepted, ignored, rejected, unauthorized, throttled, blocked, failed, stale).",
		}, []string{"route", "result"}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Subsystem: "receiver", Name: "events_published_total",
			Help: "image.pushed events published, by route.",
		}, []string{"route"}),
	}
	for _, r := range routes {
		for _, res := range []string{resultAccepted, resultIgnored, resultRejected, resultUnauthorized, resultThrottled, resultBlocked, resultFailed, resultStale} {
			m.deliveries.WithLabelValues(r.Name, res)
		}
		m.published.WithLabelValues(r.Name)
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.deliveries, err = register(reg, m.deliveries); err != nil {
		return nil, err
	}
	if m.published, err = register(reg, m.published); err != nil {
		return nil, err
	}
	return m, nil
}

// register adds c to reg, or returns the counter already there (a second
// receiver in the same process shares it).
func register(reg prometheus.Registerer, c *prometheus.CounterVec) (*prometheus.CounterVec, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing, nil
		}
	}
	return nil, err
}

func (m *metrics) count(route, result string) {
	if route == "" {
		route = unknownRoute
	}
	m.deliveries.WithLabelValues(route, result).Inc()
}
