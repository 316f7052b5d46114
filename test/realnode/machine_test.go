package realnode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/test/realnode"
)

// machine is what a pool may leave behind on the host: compared before
// a pool starts and after it ends.
type machine struct {
	Mounts    []string
	Links     []string
	Cgroups   []string
	Processes []string
	Sysctls   map[string]string
	Nft       string
	Files     []string
	Pools     []string
}

// nodeProgramSuffixes name the executables of a pool's processes.
var nodeProgramSuffixes = []string{
	"/kubelet", "/kube-proxy", "/coredns", "/kube-scheduler", "/containerd", "/containerd-shim-runc-v2", "/pause",
}

func snapshot(t *testing.T) machine {
	t.Helper()
	m := machine{Sysctls: realnode.ReadSysctls()}
	mounts, err := realnode.MountsUnder("/")
	if err != nil {
		t.Fatalf("mounts: %v", err)
	}
	m.Mounts = sorted(mounts)
	m.Links = sorted(names(t, "/sys/class/net"))
	for _, h := range globNames("/sys/fs/cgroup/*") {
		for _, c := range globNames(filepath.Join(h, "*")) {
			if st, err := os.Stat(c); err == nil && st.IsDir() {
				m.Cgroups = append(m.Cgroups, c)
			}
		}
	}
	m.Processes = nodeProcesses()
	// -s: without counters, which change with any traffic.
	out, err := exec.Command("nft", "-s", "list", "ruleset").CombinedOutput()
	if err != nil {
		t.Fatalf("nft -s list ruleset: %v: %s", err, out)
	}
	m.Nft = string(out)
	for _, p := range realnode.GlobalPaths {
		if _, err := os.Lstat(p); err == nil {
			m.Files = append(m.Files, p)
			m.Files = append(m.Files, globNames(filepath.Join(p, "*"))...)
		}
	}
	m.Files = sorted(m.Files)
	m.Pools = globNames(filepath.Join(realnode.StateDir, "slot-*"))
	return m
}

// nodeProcesses lists the running processes of the node programs by
// executable (a zombie has none).
func nodeProcesses() []string {
	var out []string
	for _, d := range globNames("/proc/[0-9]*") {
		exe, err := os.Readlink(filepath.Join(d, "exe"))
		if err != nil {
			continue
		}
		for _, s := range nodeProgramSuffixes {
			if strings.HasSuffix(exe, s) {
				out = append(out, exe)
			}
		}
	}
	return sorted(out)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func globNames(pattern string) []string {
	out, _ := filepath.Glob(pattern)
	return out
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}
