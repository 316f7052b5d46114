package receiver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// PathPrefix is where the receiver serves its routes.
const PathPrefix = "/hooks/"

// Publisher puts an event on the bus. Publishing the same event id twice
// must be harmless.
type Publisher interface {
	Publish(ctx context.Context, e cloudevents.Event) error
}

// Options are the receiver's collaborators.
type Options struct {
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives the delivery counters.
	Metrics prometheus.Registerer
	// MaxAge refuses a push stamped longer ago than this (a replayed
	// delivery); default DefaultMaxAge. Keep it within the bus's dedup
	// window.
	MaxAge time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// TrustedProxies, when set, replace the config's trustedProxies
	// (`inplace run --trusted-proxies`): CIDRs or addresses of the proxies
	// whose X-Forwarded-For names the client.
	TrustedProxies []string
}

// Receiver serves POST /hooks/<route>.
type Receiver struct {
	routes  map[string]*route
	pub     Publisher
	log     *slog.Logger
	metrics *metrics
	timeout time.Duration
	// readTimeout bounds reading a body; clients counts failed authentications.
	readTimeout time.Duration
	clients     *clients
	// maxAge refuses older pushes (replays); now is the clock.
	maxAge time.Duration
	now    func() time.Time
}

// route is a Route ready to serve.
type route struct {
	name, registry string
	format         registry.Format
	auth           authenticator
	limit          int64
	limiter        *rate.Limiter
	urlToken       bool
	maxImages      int
}

var _ http.Handler = (*Receiver)(nil)

// New validates cfg, reads its secrets and returns the receiver. An error
// names the config key at fault.
func New(cfg Config, pub Publisher, opts Options) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("receiver config: %w", err)
	}
	h := &Receiver{routes: map[string]*route{}, pub: pub, log: opts.Logger, timeout: cfg.PublishTimeout.Duration,
		maxAge: opts.MaxAge, now: opts.Now}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.maxAge <= 0 {
		h.maxAge = DefaultMaxAge
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.timeout == 0 {
		h.timeout = DefaultPublishTimeout
	}
	if h.readTimeout = cfg.ReadTimeout.Duration; h.readTimeout == 0 {
		h.readTimeout = DefaultReadTimeout
	}
	clients, err := clientLimits(cfg, opts.TrustedProxies)
	if err != nil {
		return nil, err
	}
	h.clients = clients
	for i, r := range cfg.Routes {
		rt, err := newRoute(fmt.Sprintf("routes[%d]", i), r)
		if err != nil {
			return nil, fmt.Errorf("receiver config: %w", err)
		}
		h.routes[r.Name] = rt
	}
	m, err := newMetrics(opts.Metrics, cfg.Routes)
	if err != nil {
		return nil, fmt.Errorf("receiver metrics: %w", err)
	}
	h.metrics = m
	return h, nil
}

func newRoute(k string, r Route) (*route, error) {
	a, err := newAuthenticator(k+".auth", r.Auth, r.Format)
	if err != nil {
		return nil, err
	}
	rt := &route{
		name: r.Name, registry: r.Registry, format: r.Format, auth: a,
		limit: r.BodyLimit, urlToken: r.Auth.Type == AuthURLToken, maxImages: r.MaxImages,
	}
	if rt.limit == 0 {
		rt.limit = DefaultBodyLimit
	}
	if rt.maxImages == 0 {
		rt.maxImages = DefaultMaxImages
	}
	rl := RateLimit{PerSecond: DefaultPerSecond}
	if r.RateLimit != nil {
		rl = *r.RateLimit
	}
	if rl.Burst == 0 {
		rl.Burst = max(1, int(2*rl.PerSecond))
	}
	rt.limiter = rate.NewLimiter(rate.Limit(rl.PerSecond), rl.Burst)
	return rt, nil
}

// clientLimits builds the per-client limit of failed authentications,
// behind the trusted proxies of the flag (set) or of cfg.
func clientLimits(cfg Config, flag []string) (*clients, error) {
	l := DefaultAuthFailures
	if cfg.AuthFailures != nil {
		l = *cfg.AuthFailures
	}
	list, name := cfg.TrustedProxies, "receiver config: trustedProxies"
	if len(flag) > 0 {
		list, name = flag, "--trusted-proxies"
	}
	var proxies []netip.Prefix
	for i, s := range list {
		p, err := ParseCIDR(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %q: %w", name, i, s, err)
		}
		proxies = append(proxies, p)
	}
	return newClients(l, proxies), nil
}

// lookup finds the route of path /hooks/<route>[/<token>].
func (h *Receiver) lookup(path string) (*route, string, bool) {
	rest, ok := strings.CutPrefix(path, PathPrefix)
	if !ok {
		return nil, "", false
	}
	name, token, _ := strings.Cut(rest, "/")
	rt := h.routes[name]
	if rt == nil || (token != "" && !rt.urlToken) {
		return nil, "", false
	}
	return rt, token, true
}
