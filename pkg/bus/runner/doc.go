// Package runner runs functions against the bus: for each function it pulls
// from the function's durable consumer, decodes and normalises the
// CloudEvent, calls the handler with a deadline shorter than AckWait,
// publishes the handler's outputs, and only then settles the input with
// exactly one of Ack, Nak with backoff, Nak with the handler's delay, or
// Term with a dead-letter copy carrying the reason.
//
// A message has two budgets: RetryLimit failures (counted in the bus, so
// shared by replicas and kept across restarts) and LaterLimit "not yet"
// answers; using up either dead-letters it with the reason.
//
// Handlers never settle messages themselves and never see NATS. A crash
// between publishing outputs and acking the input is harmless: the input is
// redelivered, the handler derives the same output ids, and the stream's
// dedup window drops the copies.
package runner
