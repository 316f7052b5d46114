package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/inputs/receiver"
)

// SinkPublisher sends events to a Knative sink (K_SINK: usually a Broker's
// ingress) as binary-mode CloudEvents over HTTP. It is the Publisher of
// Knative mode: the receiver's, and the dispatcher's for the outputs beyond
// the one it replies with.
//
// Unlike the bus, a Broker does not drop a second event with the same id:
// a redelivered input sends its outputs again, and the functions downstream
// see them twice (they are idempotent, so nothing happens twice).
type SinkPublisher struct {
	client    cloudevents.Client
	target    string
	tokenFile string
}

// SinkTokenFile is where a SinkBinding mounts the token for its sink when
// Knative Eventing's authentication-oidc is on (knative.dev/eventing
// sinkbinding_lifecycle.go: the volume oidc-token at /oidc, key token); the
// Broker's ingress then refuses a request without it.
const SinkTokenFile = "/oidc/token"

var _ receiver.Publisher = (*SinkPublisher)(nil)

// NewSinkPublisher sends to target, an absolute URL.
func NewSinkPublisher(target string) (*SinkPublisher, error) {
	if target == "" {
		return nil, fmt.Errorf("sink: no target URL (K_SINK is empty)")
	}
	c, err := cloudevents.NewClientHTTP()
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", target, err)
	}
	return &SinkPublisher{client: c, target: target}, nil
}

// WithTokenFile makes Publish send the token in path as
// `Authorization: Bearer`, read on every send (the SinkBinding renews it),
// whenever the file exists; without it, events go without a token.
func (s *SinkPublisher) WithTokenFile(path string) *SinkPublisher {
	s.tokenFile = path
	return s
}

// authorize adds the sink token to ctx's request headers.
func (s *SinkPublisher) authorize(ctx context.Context) (context.Context, error) {
	if s.tokenFile == "" {
		return ctx, nil
	}
	raw, err := os.ReadFile(s.tokenFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ctx, nil
	case err != nil:
		return ctx, fmt.Errorf("sink %s: read its token: %w", s.target, err)
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" {
		return ctx, nil
	}
	return cehttp.WithCustomHeader(ctx, http.Header{"Authorization": {"Bearer " + tok}}), nil
}

// Target is the URL events are sent to.
func (s *SinkPublisher) Target() string { return s.target }

// Publish sends e and returns once the sink accepted it. A refusal that
// sending again cannot change (400, 413, 415, 422) is settle.Permanent;
// anything else is retryable.
func (s *SinkPublisher) Publish(ctx context.Context, e cloudevents.Event) error {
	ctx, err := s.authorize(ctx)
	if err != nil {
		return err
	}
	res := s.client.Send(cloudevents.ContextWithTarget(ctx, s.target), e)
	if cloudevents.IsACK(res) {
		return nil
	}
	err = fmt.Errorf("send %s %s to %s: %w", e.Type(), e.ID(), s.target, res)
	var r *cehttp.Result
	if protocol.ResultAs(res, &r) {
		switch r.StatusCode {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
			http.StatusUnprocessableEntity:
			return settle.Permanent(err)
		}
	}
	return err
}

// NewKnativeReceiver is the webhook receiver of Knative mode: it publishes
// image.pushed to pub (a SinkPublisher to the Broker) instead of the bus.
// Its routes come from p.HooksConfig, as in `inplace run`.
func NewKnativeReceiver(p *config.Process, pub receiver.Publisher, reg prometheus.Registerer, log *slog.Logger) (http.Handler, error) {
	if p.HooksConfig == "" {
		return nil, fmt.Errorf("knative receiver: --hooks-config (INPLACE_HOOKS_CONFIG) is required")
	}
	cfg, err := receiver.LoadConfig(p.HooksConfig)
	if err != nil {
		return nil, err
	}
	r, err := receiver.New(cfg, pub, receiver.Options{Logger: log.With("function", "receiver"), Metrics: reg,
		TrustedProxies: p.TrustedProxies})
	if err != nil {
		return nil, err
	}
	return r, nil
}
