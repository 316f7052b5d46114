package realnode

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Memory is the resident memory of one node's processes, in bytes.
type Memory struct {
	Kubelet, Containerd, KubeProxy uint64
	// Shims are containerd's runc shims, one per pod; Containers every
	// process in the node's cgroups (pause included).
	Shims, Containers uint64
}

// Daemons is the node's own cost: kubelet, containerd, kube-proxy and the
// shims.
func (m Memory) Daemons() uint64 { return m.Kubelet + m.Containerd + m.KubeProxy + m.Shims }

// NodeMemory reads the resident memory of the named node's processes.
func (n *Nodes) NodeMemory(name string) (Memory, error) {
	nd := n.node(name)
	if nd == nil {
		return Memory{}, fmt.Errorf("node memory: no node %q", name)
	}
	var m Memory
	var err error
	if m.Kubelet, err = rss(nd.kubelet.Pid()); err != nil {
		return m, err
	}
	if m.Containerd, err = rss(nd.containerd.Pid()); err != nil {
		return m, err
	}
	if m.KubeProxy, err = rss(nd.proxy.Pid()); err != nil {
		return m, err
	}
	for _, pid := range pidsMentioning("-address " + nd.socket()) {
		v, _ := rss(pid)
		m.Shims += v
	}
	ms, err := cgroupMounts()
	if err != nil {
		return m, err
	}
	for _, pid := range cgroupPids([]string{filepath.Join(firstWith(ms, "/memory"), nd.cgroupRoot)}) {
		v, _ := rss(pid)
		m.Containers += v
	}
	return m, nil
}

func firstWith(paths []string, suffix string) string {
	for _, p := range paths {
		if strings.HasSuffix(p, suffix) {
			return p
		}
	}
	return ""
}

// rss is VmRSS of /proc/<pid>/status in bytes.
func rss(pid int) (uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// ContainerCgroup is the directory of a container's cgroup in the
// hierarchy of controller (e.g. "cpu") on the named node: the kubelet
// (cgroupfs driver) puts it at <cgroup root>/kubepods[/<qos>]/pod<uid>/<id>.
func (n *Nodes) ContainerCgroup(node, podUID, containerID, controller string) (string, error) {
	nd := n.node(node)
	if nd == nil {
		return "", fmt.Errorf("container cgroup: no node %q", node)
	}
	_, id, ok := strings.Cut(containerID, "://")
	if !ok {
		id = containerID
	}
	base := filepath.Join("/sys/fs/cgroup", controller, nd.cgroupRoot, "kubepods")
	for _, pattern := range []string{filepath.Join(base, "pod"+podUID, id), filepath.Join(base, "*", "pod"+podUID, id)} {
		if m, _ := filepath.Glob(pattern); len(m) == 1 {
			return m[0], nil
		}
	}
	return "", fmt.Errorf("container cgroup: %s of pod %s not under %s", id, podUID, base)
}
