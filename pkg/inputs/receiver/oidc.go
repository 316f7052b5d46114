package receiver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// unavailable is a 503: the credentials could not be checked now (the
// issuer's keys are out of reach); the sender should retry.
type unavailable struct{ err error }

func (e *unavailable) Error() string { return "cannot verify credentials now: " + e.err.Error() }
func (e *unavailable) Unwrap() error { return e.err }

// oidcAuth verifies `Authorization: Bearer <JWT>` as Pub/Sub push
// authentication sends it: signature by the issuer's keys (discovery and
// JWKS), iss, aud, exp, and optionally the service account's email.
type oidcAuth struct {
	issuer, audience, email, jwksURL string
	client                           *http.Client

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

func newOIDCAuth(a *Auth) *oidcAuth {
	return &oidcAuth{
		issuer: a.Issuer, audience: a.Audience, email: a.Email, jwksURL: a.JWKSURL,
		client: &http.Client{Timeout: 10 * time.Second},
	}
}

func (a *oidcAuth) check(r *http.Request, _ string, _ []byte) error {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(raw) == "" {
		return errMissingToken
	}
	v, err := a.load(r.Context())
	if err != nil {
		return &unavailable{err: err}
	}
	tok, err := v.Verify(r.Context(), strings.TrimSpace(raw))
	if err != nil {
		return &unauthorized{Msg: errInvalidToken.Msg, Detail: err}
	}
	return a.checkEmail(tok)
}

func (a *oidcAuth) checkEmail(tok *oidc.IDToken) error {
	if a.email == "" {
		return nil
	}
	var c struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}
	if err := tok.Claims(&c); err != nil {
		return &unauthorized{Msg: errInvalidToken.Msg, Detail: err}
	}
	if !c.EmailVerified || c.Email != a.email {
		return &unauthorized{Msg: errInvalidToken.Msg, Detail: fmt.Errorf("email %q (verified %v) is not %q", c.Email, c.EmailVerified, a.email)}
	}
	return nil
}

// load builds the verifier once: by discovery from the issuer, or on the
// configured JWKS URL. A failed discovery is retried on the next delivery.
func (a *oidcAuth) load(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verifier != nil {
		return a.verifier, nil
	}
	cfg := &oidc.Config{ClientID: a.audience}
	if a.jwksURL != "" {
		// The key set outlives this request: it keeps only the client.
		keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), a.client), a.jwksURL)
		a.verifier = oidc.NewVerifier(a.issuer, keys, cfg)
		return a.verifier, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, a.client), a.issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery of %s: %w", a.issuer, err)
	}
	a.verifier = p.Verifier(cfg)
	return a.verifier, nil
}
