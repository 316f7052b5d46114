package receiver

import (
	"fmt"
	"os"
	"regexp"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// Config lists the webhook routes.
type Config struct {
	Routes []Route `json:"routes"`
	// PublishTimeout bounds publishing one delivery's events (default 10s).
	PublishTimeout Duration `json:"publishTimeout,omitempty"`
	// ReadTimeout bounds reading one delivery's body (default 10s): a
	// client that sends slowly is answered 408 and its connection freed.
	ReadTimeout Duration `json:"readTimeout,omitempty"`
	// AuthFailures limits failed authentications per client, over all
	// routes (default 10 a minute, burst 10): beyond it the client's
	// failed deliveries are answered 429 with a Retry-After instead of 401.
	// A delivery that authenticates is never charged to it nor refused by
	// it, and other clients and the routes' own rate limits are untouched.
	AuthFailures *RateLimit `json:"authFailures,omitempty"`
	// TrustedProxies are the CIDRs of proxies (an ingress) whose
	// X-Forwarded-For names the client; without them the client is the
	// peer address.
	TrustedProxies []string `json:"trustedProxies,omitempty"`
}

// Route is one webhook endpoint, POST /hooks/<name>.
type Route struct {
	// Name is the path segment.
	Name string `json:"name"`
	// Format is the payload format (registry.Formats()).
	Format registry.Format `json:"format"`
	// Auth is required; write {type: none} to accept anyone.
	Auth *Auth `json:"auth"`
	// Registry, "host[/path]", replaces the registry host the payload names
	// (see registry.Delivery.Registry).
	Registry string `json:"registry,omitempty"`
	// BodyLimit in bytes (default 1 MiB).
	BodyLimit int64 `json:"bodyLimit,omitempty"`
	// RateLimit of authenticated deliveries (default 50/s, burst twice the
	// rate). Deliveries that fail authentication do not use it up.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// MaxImages caps the pushes one delivery may carry (default 100): a
	// delivery with more is refused (413) and publishes nothing.
	MaxImages int `json:"maxImages,omitempty"`
}

// RateLimit is a token bucket.
type RateLimit struct {
	PerSecond float64 `json:"perSecond"`
	Burst     int     `json:"burst,omitempty"`
}

// Defaults.
const (
	DefaultBodyLimit      = 1 << 20
	DefaultPerSecond      = 50
	DefaultPublishTimeout = 10 * time.Second
	DefaultReadTimeout    = 10 * time.Second
	DefaultMaxImages      = 100
	maxBodyLimit          = 32 << 20
	maxImagesLimit        = 10000
)

// DefaultAuthFailures is the default limit of failed authentications per
// client: 10 a minute, burst 10.
var DefaultAuthFailures = RateLimit{PerSecond: 10.0 / 60, Burst: 10}

// Duration is a time.Duration written as "10s" in the config.
type Duration struct{ time.Duration }

// UnmarshalJSON reads "10s", "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := unquote(b)
	if err != nil {
		return err
	}
	d.Duration, err = time.ParseDuration(s)
	return err
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

func unquote(b []byte) (string, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", fmt.Errorf("a duration is a string such as \"10s\", not %s", b)
	}
	return string(b[1 : len(b)-1]), nil
}

// LoadConfig reads a YAML or JSON file; unknown keys are errors.
func LoadConfig(path string) (Config, error) {
	var c Config
	raw, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("load receiver config: %w", err)
	}
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return c, fmt.Errorf("load receiver config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("load receiver config %s: %w", path, err)
	}
	return c, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,62})$`)

// Validate checks the config without reading secrets; an error names the
// key ("routes[2].auth.secret: ...").
func (c Config) Validate() error {
	if len(c.Routes) == 0 {
		return keyErr("routes", "at least one route is required")
	}
	seen := map[string]bool{}
	for i, r := range c.Routes {
		k := fmt.Sprintf("routes[%d]", i)
		if err := r.validate(k); err != nil {
			return err
		}
		if seen[r.Name] {
			return keyErr(k+".name", fmt.Sprintf("%q is used by two routes", r.Name))
		}
		seen[r.Name] = true
	}
	if c.PublishTimeout.Duration < 0 {
		return keyErr("publishTimeout", "must not be negative")
	}
	if c.ReadTimeout.Duration < 0 {
		return keyErr("readTimeout", "must not be negative")
	}
	if l := c.AuthFailures; l != nil && (l.PerSecond <= 0 || l.Burst < 0) {
		return keyErr("authFailures", "perSecond must be positive and burst not negative")
	}
	for i, p := range c.TrustedProxies {
		if _, err := ParseCIDR(p); err != nil {
			return keyErr(fmt.Sprintf("trustedProxies[%d]", i), err.Error())
		}
	}
	return nil
}

func (r Route) validate(k string) error {
	switch {
	case !nameRE.MatchString(r.Name):
		return keyErr(k+".name", fmt.Sprintf("%q is not a path segment of lower-case letters, digits, '.', '_' or '-'", r.Name))
	case r.Format == "":
		return keyErr(k+".format", "required")
	case !r.Format.Valid():
		return keyErr(k+".format", fmt.Sprintf("unknown format %q (one of %v)", r.Format, registry.Formats()))
	case r.Auth == nil:
		return keyErr(k+".auth", "required (write `type: none` to accept unauthenticated deliveries)")
	case r.BodyLimit < 0 || r.BodyLimit > maxBodyLimit:
		return keyErr(k+".bodyLimit", fmt.Sprintf("must be between 0 (default) and %d bytes", maxBodyLimit))
	case r.RateLimit != nil && (r.RateLimit.PerSecond <= 0 || r.RateLimit.Burst < 0):
		return keyErr(k+".rateLimit", "perSecond must be positive and burst not negative")
	case r.MaxImages < 0 || r.MaxImages > maxImagesLimit:
		return keyErr(k+".maxImages", fmt.Sprintf("must be between 0 (default %d) and %d", DefaultMaxImages, maxImagesLimit))
	}
	return r.Auth.validate(k+".auth", r.Format)
}

// KeyError names the config key that is wrong.
type KeyError struct {
	Key    string
	Reason string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Reason }

func keyErr(key, reason string) error { return &KeyError{Key: key, Reason: reason} }
