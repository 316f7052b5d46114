// Package hollow runs nodes of the test world on the real kubelet's code:
// N hollow-node processes (kubemark's hollow kubelet with a fake CRI
// runtime, wrapped so that pulls go through the test registry, probes and
// Events are real and each node has its own loopback port; see
// test/tools/hollow-node) and the real kube-scheduler, built by `make bin`.
//
// It is the other node mode of test/world beside the simulated nodes of
// test/kubelet, which must agree with it (research/kubelet-fidelity.md).
// Nothing here simulates the kubelet: it only starts, waits for and stops
// the real processes.
package hollow
