package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Commands run on the host, from the Debian packages below.
const (
	ipCmd   = "/usr/sbin/ip"
	nsenter = "/usr/bin/nsenter"
	unshare = "/usr/bin/unshare"
)

// Packages maps each file real nodes need to the Debian package that
// has it (test/tools/packages.sh installs the same list).
var Packages = map[string]string{
	"/usr/bin/containerd":              "containerd",
	"/usr/bin/containerd-shim-runc-v2": "containerd",
	"/usr/sbin/runc":                   "runc",
	"/usr/lib/cni/bridge":              "containernetworking-plugins",
	"/usr/lib/cni/host-local":          "containernetworking-plugins",
	"/usr/lib/cni/loopback":            "containernetworking-plugins",
	"/usr/sbin/iptables":               "iptables",
	"/usr/sbin/nft":                    "nftables",
	"/usr/sbin/conntrack":              "conntrack",
	ipCmd:                              "iproute2",
	nsenter:                            "util-linux",
	unshare:                            "util-linux",
}

// Binaries are what real nodes need from `make bin`, beside the control
// plane's.
var Binaries = []string{"kubelet", "kube-proxy", "coredns", "kube-scheduler"}

// Check says whether real nodes can run here with the binaries in binDir,
// and if not, exactly what is missing: Linux, root, the cgroup v1
// hierarchy, Debian packages (with the command installing them), binaries
// of `make bin`.
func Check(binDir string) error {
	if runtime.GOOS != "linux" {
		return &UnavailableError{Missing: []string{"Linux"}}
	}
	var problems []string
	if os.Geteuid() != 0 {
		problems = append(problems, "root (containerd, the kubelet, network namespaces, mounts and cgroups): run the tests as root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.shares"); err != nil {
		problems = append(problems, "the cgroup v1 hierarchy (/sys/fs/cgroup/cpu/cpu.shares): the nodes' kubelets are configured for it")
	}
	if pkgs := missingPackages(); len(pkgs) > 0 {
		problems = append(problems, fmt.Sprintf("Debian packages %s: as root run `apt-get update && apt-get install -y --no-install-recommends %s` (or `make bin` as root)",
			strings.Join(pkgs, ", "), strings.Join(pkgs, " ")))
	}
	var bins []string
	for _, b := range Binaries {
		if st, err := os.Stat(filepath.Join(binDir, b)); err != nil || st.Mode()&0o111 == 0 {
			bins = append(bins, filepath.Join(binDir, b))
		}
	}
	if len(bins) > 0 {
		problems = append(problems, fmt.Sprintf("%s: run `make bin`", strings.Join(bins, ", ")))
	}
	if len(problems) > 0 {
		return &UnavailableError{Missing: problems}
	}
	return nil
}

// UnavailableError says what this machine lacks for real nodes.
type UnavailableError struct {
	// Missing says, one item each, what is missing and how to get it.
	Missing []string
}

func (e *UnavailableError) Error() string {
	return "real nodes (INPLACE_NODES=real) need: " + strings.Join(e.Missing, "; ")
}

func missingPackages() []string {
	set := map[string]bool{}
	for path, pkg := range Packages {
		if st, err := os.Stat(path); err != nil || st.Mode()&0o111 == 0 {
			set[pkg] = true
		}
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
