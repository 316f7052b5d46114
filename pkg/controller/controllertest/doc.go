// Package controllertest is test support for compute-spec and its rollout
// controller over the test world: an Env with its own namespace, NATS KV
// bucket and informer cache, workloads created and awaited until Ready,
// images pushed to the world's registry, and the verify side of a rollout
// (outcomes, decisions) played by hand so a test can drive a rollout to its
// end through compute-spec alone.
//
// It must not be imported by production code (pkg/layers_test.go).
package controllertest
