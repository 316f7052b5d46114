package realnode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// evictionDiskFree is the free disk below which a node evicts pods and
// takes no new ones.
const evictionDiskFree = "256Mi"

// kubeletConfig is a node's KubeletConfiguration: cgroup v1 with the
// cgroupfs driver under the node's own cgroup root, no swap check, the
// node's address for its API (its default port: each node has its own
// network namespace), containerd's socket, cluster DNS at kube-dns,
// pod logs in the node's directory, client certificates of the cluster CA
// and webhook authorization for the API server's calls. Eviction
// thresholds are low and absolute: the nodes share one machine's disk and
// memory with everything else running on it, and a share of a large,
// nearly full disk (1% of 250 GiB) would put them under DiskPressure, so
// that no new pod is scheduled, while gigabytes are left.
func kubeletConfig(nd *node, caFile, resolvConf string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"cgroupRoot":               nd.cgroupRoot,
		"failSwapOn":               false,
		"address":                  nd.ip,
		"readOnlyPort":             0,
		"healthzBindAddress":       "127.0.0.1",
		"containerRuntimeEndpoint": "unix://" + nd.socket(),
		"resolvConf":               resolvConf,
		"clusterDNS":               []string{DNSServiceIP},
		"clusterDomain":            ClusterDomain,
		"podCIDR":                  nd.podCIDR,
		"podLogsDir":               nd.path("pod-logs"),
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": caFile},
		},
		"authorization": map[string]any{"mode": "Webhook"},
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": evictionDiskFree, "imagefs.available": evictionDiskFree, "nodefs.inodesFree": "1%",
		},
	}, "", "  ")
}

// startKubelet writes the node's kubelet configuration and kubeconfig (a
// client certificate of system:node:<name>) and runs the kubelet in the
// node's network namespace.
func (n *Nodes) startKubelet(nd *node) error {
	kubeconfig := nd.path("kubelet.kubeconfig")
	if err := n.opts.Cluster.WriteKubeconfig(kubeconfig, "system:node:"+nd.name, "system:nodes"); err != nil {
		return err
	}
	cfg, err := kubeletConfig(nd, n.opts.Cluster.CAFile(), n.resolvConf)
	if err != nil {
		return err
	}
	if err := writeFiles(map[string][]byte{nd.path("kubelet.json"): cfg}); err != nil {
		return err
	}
	args := []string{
		"--config=" + nd.path("kubelet.json"),
		"--kubeconfig=" + kubeconfig,
		"--root-dir=" + nd.path("kubelet"),
		"--cert-dir=" + nd.path("kubelet", "pki"),
		"--hostname-override=" + nd.name,
		"--node-ip=" + nd.ip,
		"--node-labels=" + strings.Join(n.labels(), ","),
	}
	if v := n.opts.KubeletVerbosity; v > 0 {
		args = append(args, fmt.Sprintf("--v=%d", v))
	}
	nd.kubelet, err = n.startIn(nd, "kubelet", filepath.Join(n.opts.BinDir, "kubelet"), args...)
	return err
}

// labels are the nodes' labels as k=v, sorted.
func (n *Nodes) labels() []string {
	var out []string
	for k, v := range n.opts.NodeLabels {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// startProxy runs kube-proxy (iptables mode, as system:kube-proxy) in the
// node's network namespace, where its rules and sysctls stay.
// conntrack-max-per-core 0 leaves nf_conntrack_max alone (read-only in a
// namespace). --v=2 logs each sync of the rules (a few lines a sync), which
// a test reads to tell when an endpoint's change reached the node.
func (n *Nodes) startProxy(nd *node) error {
	kubeconfig := nd.path("kube-proxy.kubeconfig")
	if err := n.opts.Cluster.WriteKubeconfig(kubeconfig, "system:kube-proxy"); err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--hostname-override=" + nd.name,
		"--proxy-mode=iptables",
		"--cluster-cidr=" + layout(n.host.Slot()).clusterCIDR(),
		"--bind-address=" + nd.ip,
		"--healthz-bind-address=" + nd.ip + ":10256",
		"--metrics-bind-address=127.0.0.1:10249",
		"--conntrack-max-per-core=0",
		"--v=2", // each sync of the rules: when a Service's endpoints reached the node
	}
	p, err := n.startIn(nd, "kube-proxy", filepath.Join(n.opts.BinDir, "kube-proxy"), args...)
	if err != nil {
		return fmt.Errorf("node %s: %w", nd.name, err)
	}
	nd.proxy = p
	return nil
}
