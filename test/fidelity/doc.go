// Package fidelity compares the simulated kubelet (test/kubelet) with the
// real kubelet's code (hollow nodes, test/hollow) and, with
// INPLACE_NODES=real, with a real node (kubelet, containerd, runc;
// test/realnode): the same scenarios run on one node of each kind in one
// control plane, and the observable sequence of each pod's status and of
// its Events must be the same (research/kubelet-fidelity.md lists where
// they once differed).
package fidelity
