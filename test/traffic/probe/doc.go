// Package probe is the traffic probe's sending and counting: Run sends
// GET requests to a URL at a steady rate, each on a new connection (so a
// closed endpoint shows as refused, not hidden by a pooled connection) and
// bounded by a short timeout, and counts how each ended: ok (2xx), refused,
// reset, timeout, server error (5xx) or other, and which version answered
// (the X-Version header, else the body's first line).
//
// It imports only the standard library and test/images/settings: the
// probe program (test/images/cmd/probe) runs it in a pod, and
// test/traffic reads its Counts.
package probe
