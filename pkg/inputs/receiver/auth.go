package receiver

import (
	"fmt"
	"net/http"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// Auth types.
const (
	AuthHMAC     = "hmac"
	AuthToken    = "token"
	AuthURLToken = "urltoken"
	AuthOIDC     = "oidc"
	AuthNone     = "none"
)

// Auth is how a route authenticates deliveries.
type Auth struct {
	// Type is hmac, token, urltoken, oidc or none.
	Type string `json:"type"`
	// Header carries the signature (hmac) or the token (token). The default
	// depends on the format: X-Hub-Signature-256 for ghcr, X-Gitea-Signature
	// (or X-Forgejo-Signature) for gitea, X-JFrog-Event-Auth for jfrog,
	// Authorization otherwise.
	Header string `json:"header,omitempty"`
	// Prefix precedes the hex signature (hmac: "sha256=" for GitHub) or the
	// secret (token: "Bearer ").
	Prefix *string `json:"prefix,omitempty"`
	// Secret is the HMAC key or the expected token (hmac, token, urltoken).
	Secret *Secret `json:"secret,omitempty"`
	// Issuer, Audience and Email configure oidc; Email, when set, is the
	// only service account accepted (claim email, email_verified true).
	Issuer   string `json:"issuer,omitempty"`
	Audience string `json:"audience,omitempty"`
	Email    string `json:"email,omitempty"`
	// JWKSURL skips discovery and reads keys from this URL (oidc).
	JWKSURL string `json:"jwksURL,omitempty"`
}

// unsigned are the formats whose registry cannot sign a delivery.
var unsigned = map[registry.Format]bool{
	registry.DockerHub: true, registry.Distribution: true, registry.Harbor: true, registry.Quay: true,
	registry.ACR: true, registry.GAR: true, registry.ECR: true,
}

func (a *Auth) validate(k string, f registry.Format) error {
	switch a.Type {
	case AuthHMAC:
		if unsigned[f] {
			return keyErr(k+".type", fmt.Sprintf("%s does not sign its deliveries; use token, urltoken or oidc", f))
		}
		return a.Secret.validate(k + ".secret")
	case AuthToken, AuthURLToken:
		return a.Secret.validate(k + ".secret")
	case AuthOIDC:
		switch {
		case a.Issuer == "":
			return keyErr(k+".issuer", "required for oidc")
		case a.Audience == "":
			return keyErr(k+".audience", "required for oidc (Pub/Sub: the push endpoint URL, or the custom audience)")
		}
		return a.noSecret(k)
	case AuthNone:
		return a.noSecret(k)
	case "":
		return keyErr(k+".type", "required: hmac, token, urltoken, oidc or none")
	}
	return keyErr(k+".type", fmt.Sprintf("unknown %q: hmac, token, urltoken, oidc or none", a.Type))
}

func (a *Auth) noSecret(k string) error {
	if a.Secret != nil {
		return keyErr(k+".secret", "not used by type "+a.Type)
	}
	return nil
}

// signature is where a format's registry puts its HMAC: the first header
// present wins.
type signature struct{ header, prefix string }

func defaultSignatures(f registry.Format) []signature {
	switch f {
	case registry.Gitea:
		return []signature{{"X-Gitea-Signature", ""}, {"X-Forgejo-Signature", ""}, {"X-Hub-Signature-256", "sha256="}}
	case registry.JFrog:
		return []signature{{"X-JFrog-Event-Auth", ""}}
	}
	return []signature{{"X-Hub-Signature-256", "sha256="}}
}

func defaultTokenHeader(f registry.Format) string {
	if f == registry.JFrog {
		return "X-JFrog-Event-Auth"
	}
	return "Authorization"
}

// authenticator checks one delivery: token is the URL token (if any), body
// the raw body.
type authenticator interface {
	check(r *http.Request, token string, body []byte) error
}
