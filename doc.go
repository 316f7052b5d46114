// Package function is the Knative entry of inplace: a knative.dev/func-go
// instanced CloudEvents function (New, Start, Stop, Ready, Alive, Handle)
// that dispatches each event by type to compute-spec, pre-pull, patch-pod
// or verify. One image runs as four Knative Services, each told by
// INPLACE_FUNCTIONS which function it is and fed by Triggers on that
// function's input types; with INPLACE_FUNCTIONS unset one service runs
// all four (what `func deploy` makes from func.yaml).
//
// HTTP status is the retry contract with the Broker: 200 with at most one
// event as the reply; a permanent error 422 (the Broker dead-letters it and
// never retries); a retryable error, or "not yet", 503 (the Broker retries
// with the Trigger's backoff; "not yet" also says Retry-After when the
// service runs behind RetryAfter, as Serve does). Never 404 or 409 for
// "try again": the NATS JetStream channel drops those. A handler that
// produces several events replies with the first and sends the others to
// K_SINK first, so a failed send is retried with the input.
//
// Events are adapted as in the bus runner (events.Normalize): a Knative
// ApiServerSource update about a pod becomes pod.updated, a CDEvents
// artifact.published becomes image.pushed. No pod watcher runs in Knative
// mode, so the service running verify also does the watcher's other job:
// it opens the inplace.dev/ready gate of a new pod the ApiServerSource
// reports. The functions hold no state
// between events; compute-spec keeps rollout progress in NATS KV, so even
// Knative mode needs NATS, but only for that bucket.
//
// The package must not settle anything itself beyond the HTTP answer, and
// must not talk to the bus's stream.
package function
