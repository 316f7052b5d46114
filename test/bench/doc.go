// Command bench measures the project on the test world (`make bench`) and
// prints one table and writes JSON; it asserts nothing about speed.
//
// Rollouts, on simulated nodes that charge recreation what a real cluster
// does (profile.go names each figure's source): a Deployment whose new
// image is cached on the nodes, one whose image is not, and a StatefulSet
// with a PVC per pod, each with a readiness gate and a Service, upgraded in
// place (clock: webhook → rollout.completed), by the native rolling update
// at the same max-unavailable and at its defaults (clock: template patch →
// `kubectl rollout status` complete), and for the cached Deployment by the
// benchmark itself as an ideal controller (the floor). API requests by
// actor come from the API server's audit log (audit.go, tally.go).
//
// Scale, on nodes that take no time: 1,000 pods at max-unavailable 100%
// (pods/s, requests per pod), with several replicas per function when main
// supports them (replicas.go); webhook → first patch; RSS of `inplace run`
// watching 1,000 and 10,000 pods. The project's targets are printed beside
// the figures (report.go).
package main
