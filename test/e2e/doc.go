// Package e2e tests the whole chain on the test world: a real push to the
// in-process registry, its real Distribution notification to the receiver,
// compute-spec, pre-pull, patch-pod and verify on the NATS stream, the
// simulated kubelet restarting containers, the real controllers keeping the
// workloads.
package e2e
