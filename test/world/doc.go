// Package world composes the test world: a real control plane
// (test/cluster: etcd, kube-apiserver, kube-controller-manager), a real
// OCI registry (test/registry: Distribution v3 in process) and simulated
// nodes (test/kubelet) that pull from that registry. Tests, benchmarks and
// the demo start one with Start, or share one per test binary with Main
// and Shared.
//
// Everything listens on 127.0.0.1 and stops with Stop. The package is test
// support and must not be imported by production code.
package world
