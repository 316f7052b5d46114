package brokerauth

import (
	"fmt"
	"strings"
)

// Keys of the function's environment (`inplace function`).
const (
	// AudienceKey turns verification on: the `aud` every request's token
	// must carry (the Trigger's `spec.subscriber.audience`).
	AudienceKey = "INPLACE_OIDC_AUDIENCE"
	// SubjectsKey lists, comma-separated, the `sub`s allowed (the Triggers'
	// OIDC ServiceAccounts, `system:serviceaccount:<ns>:<name>`); empty
	// allows any token the cluster issued for the audience.
	SubjectsKey = "INPLACE_OIDC_SUBJECTS"
	// IssuerKey is the `iss` tokens must carry; empty reads it from the
	// API server's /.well-known/openid-configuration.
	IssuerKey = "INPLACE_OIDC_ISSUER"
)

// Config is what Require checks.
type Config struct {
	Audience string
	Subjects []string
	Issuer   string
}

// FromEnv reads the configuration from cfg; ok is false when AudienceKey
// is unset (verification off). Subjects or an issuer without an audience
// are an error: they would be silently ignored.
func FromEnv(cfg map[string]string) (c Config, ok bool, err error) {
	c.Audience = strings.TrimSpace(cfg[AudienceKey])
	c.Issuer = strings.TrimSpace(cfg[IssuerKey])
	for _, s := range strings.Split(cfg[SubjectsKey], ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.Subjects = append(c.Subjects, s)
		}
	}
	if c.Audience == "" {
		if len(c.Subjects) > 0 || c.Issuer != "" {
			return Config{}, false, fmt.Errorf("%s or %s is set without %s: set the audience the Triggers send to turn sender verification on", SubjectsKey, IssuerKey, AudienceKey)
		}
		return Config{}, false, nil
	}
	for _, s := range c.Subjects {
		if !strings.HasPrefix(s, "system:serviceaccount:") || strings.Count(s, ":") != 3 {
			return Config{}, false, fmt.Errorf("%s: %q is not system:serviceaccount:<namespace>:<name>", SubjectsKey, s)
		}
	}
	return c, true, nil
}
