// Package analysis holds the end-to-end tests of canary analysis on the
// real test world (INPLACE_NODES=real; the tests skip elsewhere saying
// why): app pods on a real node opted in with an inplace.dev/analysis
// annotation (a canary of one pod, a short bake, an error-ratio query
// against a threshold), a real Prometheus scraping them, the traffic probe
// calling them, and `inplace run` as a separate process pointed at the
// Prometheus, so a test can SIGKILL it mid-analysis and start another.
package analysis
