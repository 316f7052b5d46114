package realnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/inplace-dev/inplace/test/proc"
)

// node is one real node: a network namespace, its containerd, kubelet and
// kube-proxy.
type node struct {
	index      int
	name       string
	dir        string
	ip         string
	podCIDR    string
	cniNetwork string
	cgroupRoot string
	containerd *proc.Process
	kubelet    *proc.Process
	proxy      *proc.Process
}

func (nd *node) path(elem ...string) string {
	return filepath.Join(append([]string{nd.dir}, elem...)...)
}

// netns is the file holding the node's network namespace.
func (nd *node) netns() string { return nd.path("netns") }

// socket is containerd's CRI socket.
func (nd *node) socket() string { return nd.path("containerd.sock") }

func (nd *node) procs() []*proc.Process { return []*proc.Process{nd.containerd, nd.kubelet, nd.proxy} }

// createNetwork makes the node's network namespace and joins it to the
// host bridge: eth0 with the node's address, a default route to the host,
// a route to every other node's pod /24 through that node, and on the
// host a route to this node's pods.
func (n *Nodes) createNetwork(ctx context.Context, nd *node) error {
	l := layout(n.host.Slot())
	if err := os.WriteFile(nd.netns(), nil, 0o600); err != nil {
		return fmt.Errorf("node %s: %w", nd.name, err)
	}
	if err := run(ctx, unshare, "--net="+nd.netns(), "true"); err != nil {
		return fmt.Errorf("node %s netns: %w", nd.name, err)
	}
	veth := l.hostVeth(nd.index)
	for _, args := range [][]string{
		{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", nd.netns()},
		{"link", "set", veth, "master", l.bridge(), "up"},
		{"route", "add", nd.podCIDR, "via", nd.ip, "dev", l.bridge()},
	} {
		if err := run(ctx, ipCmd, args...); err != nil {
			return fmt.Errorf("node %s network: %w", nd.name, err)
		}
	}
	batch := []string{
		"link set lo up",
		"addr add " + nd.ip + "/24 dev eth0",
		"link set eth0 up",
		"route add default via " + l.hostIP(),
	}
	for j := range n.opts.Nodes {
		if j != nd.index {
			batch = append(batch, fmt.Sprintf("route add %s via %s", l.podCIDR(j), l.nodeIP(j)))
		}
	}
	if err := os.WriteFile(nd.path("ip.batch"), []byte(strings.Join(batch, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := inNetns(ctx, nd.netns(), ipCmd, "-batch", nd.path("ip.batch")); err != nil {
		return fmt.Errorf("node %s network: %w", nd.name, err)
	}
	return nil
}

// createCgroups makes the node's cgroup root in every hierarchy (the
// kubelet's cgroupRoot must exist; under it the kubelet makes kubepods),
// a cpuset one with its parent's CPUs and memory nodes.
func createCgroups(nd *node) error {
	ms, err := cgroupMounts()
	if err != nil {
		return fmt.Errorf("node %s cgroups: %w", nd.name, err)
	}
	sort.Strings(ms)
	for _, m := range ms {
		dir := filepath.Join(m, nd.cgroupRoot)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("node %s cgroups: %w", nd.name, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(m, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					return fmt.Errorf("node %s cgroups: %s: %w", nd.name, f, err)
				}
			}
		}
	}
	return nil
}

// startIn runs a node's process with its network in the node's namespace,
// its log in the node's directory.
func (n *Nodes) startIn(nd *node, name, bin string, args ...string) (*proc.Process, error) {
	return proc.Start(nd.dir, name, nsenter, append([]string{"--net=" + nd.netns(), "--", bin}, args...), pathEnv)
}

// pathEnv has the directories of runc, iptables, mount and the CNI
// plugins' helpers on PATH for the nodes' processes.
const pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
