package receiver_test

import (
	"context"
	"log/slog"
	"net/http"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inplace-dev/inplace/pkg/inputs/receiver"
)

type logPublisher struct{ log *slog.Logger }

func (p logPublisher) Publish(ctx context.Context, e cloudevents.Event) error {
	p.log.InfoContext(ctx, "publish", "id", e.ID(), "subject", e.Subject())
	return nil
}

// The receiver is an http.Handler: mount it under /hooks/ next to anything
// else the process serves. In `inplace run` the publisher is the bus.
func Example() {
	cfg, err := receiver.LoadConfig("testdata/receiver.yaml")
	if err != nil {
		panic(err)
	}
	log := slog.Default()
	h, err := receiver.New(cfg, logPublisher{log}, receiver.Options{Logger: log, Metrics: prometheus.NewRegistry()})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle(receiver.PathPrefix, h)
	_ = &http.Server{Addr: "127.0.0.1:8080", Handler: mux}
}
