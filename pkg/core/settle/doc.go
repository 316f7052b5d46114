// Package settle classifies a handler's error into the one settlement a
// transport applies to the input event: success, retry with backoff, retry
// after a known delay ("not yet"), or give up (permanent, dead-lettered).
//
// Retry is the default: any error that is not marked Permanent or NotYet is
// retryable, so conflicts, throttling, timeouts and 5xx answers are retried.
// The decision is mapped in exactly two places: the bus runner
// (Ack / Nak with backoff / NakWithDelay / Term + DLQ) and the HTTP
// dispatcher (200 / 503 / 503 with Retry-After / 422). Handlers never settle
// messages themselves.
package settle
