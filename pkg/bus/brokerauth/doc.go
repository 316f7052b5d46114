// Package brokerauth checks that a request to a function service comes
// from the Knative Broker: Knative Eventing's sender identity
// (`authentication-oidc`). With that feature on, the Broker's filter sends
// each delivery with `Authorization: Bearer <JWT>`, a token the cluster
// issued (TokenRequest) for the Trigger's OIDC ServiceAccount
// (`<trigger>-oidc-eventing.knative.dev-trigger`) with the Trigger's
// subscriber audience as `aud`. Require verifies that token before the
// request reaches the CloudEvents handler: its signature against the
// cluster's service-account issuer keys (the JWKS the kube-apiserver serves
// at /openid/v1/jwks, read with the function's own credentials, cached and
// read again when a token names a key it has not seen), its issuer, its
// audience, its expiry and, when a list is configured, its subject.
// Anything else is answered 401 with the reason, counted, and never
// decoded; keys out of reach are answered 503 (the Broker retries).
//
// The JWT checks are go-oidc's (github.com/coreos/go-oidc/v3), the JWS
// parsing go-jose's; nothing here parses a token by hand. The package must
// not decide anything about the event itself.
package brokerauth
