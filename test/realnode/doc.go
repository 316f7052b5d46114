// Package realnode runs nodes of the test world as real Kubernetes nodes on
// this machine: per node its own containerd (runc, the CNI bridge and
// host-local plugins), the real kubelet and the real kube-proxy, with the
// real kube-scheduler and CoreDNS for the pool. It is the third node mode
// of test/world (INPLACE_NODES=real) beside the simulated nodes of
// test/kubelet and the hollow nodes of test/hollow.
//
// Each node is a network namespace of its own (a file under the pool's
// directory holds it) joined to the host by a veth pair on a bridge this
// package creates: the node's containerd, kubelet, CNI bridge and
// kube-proxy run with their network in it, so their iptables rules,
// sysctls and ports stay there. The host bridge has the pool's host
// address: the API server listens there (cluster.Options.BindAddress), the
// registry is forwarded there, and CoreDNS serves there behind the kube-dns
// Service. Every node and the host route each node's pod /24 to that
// node, so pods reach each other, the API server (as kubernetes.default)
// and CoreDNS.
//
// Everything a pool creates is recorded first in a state file under
// /run/inplace-realnode (its slot: addresses, names, directories), so that
// Close removes it all, and the next Prepare removes a pool whose test
// binary crashed: processes (containers and shims included), mounts,
// network namespaces, links, cgroups, and the sysctls and paths outside
// its directory that the kubelet changes (restored when the last pool on
// the machine ends).
//
// It needs root, the cgroup v1 hierarchy and the Debian packages listed in
// Packages (test/tools/packages.sh installs them): Check says what is
// missing.
package realnode
