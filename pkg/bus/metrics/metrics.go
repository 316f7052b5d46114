// Package metrics holds the Prometheus metrics every function reports:
// events in and out, how each input was settled, and handler latency. They
// are registered on a registry passed in, never on the global default, so
// tests and several runners in one process do not collide.
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the per-function counters and histograms.
type Metrics struct {
	Received  *prometheus.CounterVec
	Published *prometheus.CounterVec
	// Duplicates are the outputs the stream dropped as an event it had
	// (an id seen within its dedup window): a repeated decision's cost.
	Duplicates *prometheus.CounterVec
	Settled    *prometheus.CounterVec
	Duration   *prometheus.HistogramVec
}

// New creates the metrics and registers them on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Name: "events_received_total",
			Help: "Input events delivered to a function, by event type.",
		}, []string{"function", "type"}),
		Published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Name: "events_published_total",
			Help: "Output events a function published, by event type.",
		}, []string{"function", "type"}),
		Duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Name: "events_duplicate_total",
			Help: "Output events the stream dropped as duplicates of one it had, by event type.",
		}, []string{"function", "type"}),
		Settled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Name: "events_settled_total",
			Help: "How inputs were settled: ack, retry, later, dead-letter.",
		}, []string{"function", "outcome"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "inplace", Name: "handler_duration_seconds",
			Help:    "Handler latency per input event.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"function"}),
	}
	reg.MustRegister(m.Received, m.Published, m.Duplicates, m.Settled, m.Duration)
	return m
}

// NewPlannedRestarts is the counter of containers inplace restarted on
// purpose (a restart request, a config change), by namespace and
// container, registered on reg: subtract it from the kubelet's restart
// counts (kube_pod_container_status_restarts_total) so restart alerts fire
// on crashes only. Each pod also carries inplace.dev/restarted-at.
func NewPlannedRestarts(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "inplace", Name: "planned_restarts_total",
		Help: "Containers restarted in place on purpose (restart requests, config changes), not crashes.",
	}, []string{"namespace", "pod", "container"})
	reg.MustRegister(c)
	return c
}
