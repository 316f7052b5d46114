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
			Help: "Webhook deliveries by route and result (accepted, ignored, rejected, unauthorized, throttled, failed).",
		}, []string{"route", "result"}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Subsystem: "receiver", Name: "events_published_total",
			Help: "image.pushed events published, by route.",
		}, []string{"route"}),
	}
	for _, r := range routes {
		for _, res := range []string{resultAccepted, resultIgnored, resultRejected, resultUnauthorized, resultThrottled, resultFailed} {
			m.deliveries.WithLabelValues(r.Name, res)
		}
		m.published.WithLabelValues(r.Name)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.deliveries, m.published} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *metrics) count(route, result string) {
	if route == "" {
		route = unknownRoute
	}
	m.deliveries.WithLabelValues(route, result).Inc()
}
