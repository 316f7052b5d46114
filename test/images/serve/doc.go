// Package serve is the HTTP server of the app and sidecar programs
// (test/images/cmd/app, test/images/cmd/sidecar): every request is
// answered with the server's version (body and the X-Version header),
// /readyz is 503 until the start delay has passed and again once a stop
// has begun, /healthz is always 200, /metrics is the Prometheus text
// format (requests by code and version, a latency histogram). A share of
// the requests can be answered 500 while /readyz stays 200.
//
// Run is the program: it crashes at once when told to, serves, and on
// SIGTERM or SIGINT drains for the stop delay (still answering, each
// connection closed after its answer) before it shuts down and returns.
package serve
