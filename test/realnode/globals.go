package realnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Sysctls are the machine-wide kernel settings a pool may change: the
// kubelet sets the first six at start (its kernel tunables), the others
// are the host's networking ones a node's CNI plugin or kube-proxy would
// change outside a network namespace. Their values before the first pool
// are restored when the last pool on the machine ends.
var Sysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables", "net/ipv4/conf/all/route_localnet",
}

// GlobalPaths are paths outside a pool's directory that the kubelet,
// containerd or the CNI plugins create whatever they are configured with:
// removed when the last pool on the machine ends if none of them existed
// before the first. A pool removes its own entries in them (pod log links,
// CNI cache files, shim sockets) when it ends.
var GlobalPaths = []string{
	"/var/lib/kubelet", "/var/lib/kubelet/device-plugins", "/var/log/containers", "/var/log/pods",
	"/var/lib/cni", "/var/lib/cni/results", "/run/containerd", "/run/containerd/s",
}

// globals is what the machine had before the first pool: globals.json.
type globals struct {
	Sysctls map[string]string `json:"sysctls"`
	// Created are the GlobalPaths that did not exist.
	Created []string `json:"created"`
}

func globalsFile() string { return filepath.Join(StateDir, "globals.json") }

// recordGlobals writes globals.json: called by the first pool, under the
// lock.
func recordGlobals() error {
	g := globals{Sysctls: map[string]string{}}
	for _, k := range Sysctls {
		v, err := readSysctl(k)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("record sysctls: %w", err)
		}
		g.Sysctls[k] = v
	}
	for _, p := range GlobalPaths {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			g.Created = append(g.Created, p)
		}
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return fmt.Errorf("record globals: %w", err)
	}
	if err := os.WriteFile(globalsFile(), b, 0o600); err != nil {
		return fmt.Errorf("record globals: %w", err)
	}
	return nil
}

// restoreGlobals puts back what globals.json recorded and removes it:
// called when no pool runs any more, under the lock. Without the file it
// does nothing.
func restoreGlobals() error {
	b, err := os.ReadFile(globalsFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore globals: %w", err)
	}
	var g globals
	if err := json.Unmarshal(b, &g); err != nil {
		return fmt.Errorf("restore globals: %s: %w", globalsFile(), err)
	}
	var errs []error
	for k, v := range g.Sysctls {
		if cur, err := readSysctl(k); err == nil && cur == v {
			continue
		}
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, v, err))
		}
	}
	for _, p := range g.Created {
		if err := removeAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("restore globals: %w", err)
	}
	return os.Remove(globalsFile())
}

func readSysctl(key string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc/sys", key))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadSysctls reads Sysctls (those this kernel has), for a test comparing
// the machine before and after a pool.
func ReadSysctls() map[string]string {
	out := map[string]string{}
	for _, k := range Sysctls {
		if v, err := readSysctl(k); err == nil {
			out[k] = v
		}
	}
	return out
}
