package registry

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/distribution/distribution/v3/configuration"
)

// Defaults for Notify: short, so a test whose receiver fails once sees the
// retry quickly, yet generous enough for a busy machine.
const (
	DefaultNotifyTimeout   = 3 * time.Second
	DefaultNotifyBackoff   = 100 * time.Millisecond
	DefaultNotifyThreshold = 3
)

// endpointName names the single notification endpoint in Distribution's config.
const endpointName = "inplace-test"

// Notify configures Distribution's notification endpoint. A zero Notify (no
// URL) configures no endpoint, so nothing is posted.
type Notify struct {
	// URL receives a POST of an event envelope per event.
	URL string
	// Headers are static headers added to every POST, e.g.
	// Authorization: Bearer <token>.
	Headers http.Header
	// Timeout bounds one POST; 0 means DefaultNotifyTimeout.
	Timeout time.Duration
	// Threshold is the number of failed POSTs after which Distribution backs
	// off for Backoff before retrying; 0 means DefaultNotifyThreshold.
	Threshold int
	// Backoff is the retry delay once Threshold is reached; 0 means
	// DefaultNotifyBackoff. Distribution retries a failed event until it is
	// accepted (any 2xx or 3xx).
	Backoff time.Duration
	// IgnoreActions drops events with these actions ("pull", "push",
	// "mount", "delete") before they are queued. Nil sends every event, as
	// Distribution does by default; Resolve causes "pull" events.
	IgnoreActions []string
	// IncludeReferences adds target.references (an index's child manifests,
	// an image's config and layers) to manifest events.
	IncludeReferences bool
}

// validate fails fast on a URL Distribution could never post to.
func (n Notify) validate() error {
	if n.URL == "" {
		return nil
	}
	u, err := url.Parse(n.URL)
	if err != nil {
		return fmt.Errorf("notify url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("notify url %q: want http(s)://host/...", n.URL)
	}
	return nil
}

// withDefaults returns n with its zero durations and threshold filled in.
func (n Notify) withDefaults() Notify {
	if n.Timeout <= 0 {
		n.Timeout = DefaultNotifyTimeout
	}
	if n.Threshold <= 0 {
		n.Threshold = DefaultNotifyThreshold
	}
	if n.Backoff <= 0 {
		n.Backoff = DefaultNotifyBackoff
	}
	return n
}

// appConfig builds the Distribution configuration of a registry listening on
// addr (host:port), storing in the in-memory store with id store, signing upload state with secret and
// notifying as n says.
func appConfig(addr, store, secret string, n Notify) *configuration.Configuration {
	cfg := &configuration.Configuration{
		Version: configuration.CurrentVersion,
		Storage: configuration.Storage{
			storeDriver:   configuration.Parameters{"store": store},
			"delete":      configuration.Parameters{"enabled": true},
			"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
		},
	}
	cfg.Log.AccessLog.Disabled = true
	cfg.HTTP.Addr = addr
	cfg.HTTP.Host = "http://" + addr
	cfg.HTTP.Secret = secret
	cfg.Notifications.EventConfig.IncludeReferences = n.IncludeReferences
	if n.URL == "" {
		return cfg
	}
	n = n.withDefaults()
	cfg.Notifications.Endpoints = []configuration.Endpoint{{
		Name:      endpointName,
		URL:       n.URL,
		Headers:   n.Headers.Clone(),
		Timeout:   n.Timeout,
		Threshold: n.Threshold,
		Backoff:   n.Backoff,
		Ignore:    configuration.Ignore{Actions: append([]string(nil), n.IgnoreActions...)},
	}}
	return cfg
}
