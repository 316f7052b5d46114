// Package prometheus runs the instant queries of canary analysis
// (pkg/core/analysis) against a Prometheus server's HTTP API
// (/api/v1/query) and turns each answer into one number, or into an error
// that says what went wrong: the server unreachable or overloaded
// (retryable), the query refused (permanent: settle.ErrPermanent), more
// than one series, an answer over the size limit, or the deadline passed.
//
// It is an adapter of the inputs layer: it imports the pure core and the
// standard library; it never decides: a missing value or an error goes to
// analysis.Evaluate as an inconclusive measurement, never as a success.
package prometheus
