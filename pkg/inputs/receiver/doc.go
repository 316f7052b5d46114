// Package receiver is the HTTP front door of the chain: it serves
// POST /hooks/<route>, authenticates each registry webhook delivery the way
// its route says, parses it with pkg/inputs/registry and publishes one image.pushed
// event per push it reports.
//
// Routes come from a typed Config (LoadConfig reads YAML or JSON) that fails
// fast naming the bad key. Each route names a payload format, an
// authentication (hmac, token, urltoken, oidc, or none, which must be
// written out), a body limit, a cap on the images of one delivery and a rate
// limit of authenticated deliveries; failed authentications are limited per
// client (a delivery that authenticates is never refused by that limit),
// and each body must arrive within the read timeout. Comparisons of secrets are
// constant-time; a 401 never says more than "missing token" or "signature
// mismatch".
//
// The HTTP status is the registry's retry contract: 202 when the events
// were published, 200 {"ignored": …} for a genuine delivery that is not a
// push, 400 naming the field of a malformed body, 401, 404 (unknown route),
// 405, 408, 413, 415, 429 with Retry-After, and 503 when the bus did not take an
// event, so that the registry delivers again. A repeated delivery yields the
// same event ids (events.PushID), which the bus drops as duplicates.
//
// The Receiver is an http.Handler: `inplace run` mounts it next to the
// functions, and a Knative function can call its ServeHTTP. It keeps no
// state between deliveries beyond rate limiters and the OIDC key cache, and
// it must not decide which workloads a push concerns: that is compute-spec's.
package receiver
