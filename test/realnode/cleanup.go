package realnode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// cleanup removes everything the pool of s created on the machine, its
// processes first. It goes on after an error and returns them all; run
// twice it finds nothing left the second time.
func cleanup(s *state) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := layout(s.Slot)
	roots, err := cgroupRoots(s)
	errs := []error{err}
	errs = append(errs, killAll(ctx, s.Dir, roots))
	errs = append(errs, removeShimSockets(s.Dir))
	errs = append(errs, unmountAll(s.Dir))
	for _, n := range s.Nodes {
		if linkExists(l.hostVeth(n.Index)) {
			errs = append(errs, run(ctx, ipCmd, "link", "del", l.hostVeth(n.Index)))
		}
	}
	if s.Bridge && linkExists(l.bridge()) {
		errs = append(errs, run(ctx, ipCmd, "link", "del", l.bridge()))
	}
	for _, r := range roots {
		errs = append(errs, removeCgroupTree(r))
	}
	errs = append(errs, removeCNICache(s), removeLogLinks(s.Dir))
	if s.Dir != "" {
		errs = append(errs, removeAll(s.Dir))
	}
	return errors.Join(errs...)
}

// cgroupRoots are the nodes' cgroup roots in every hierarchy.
func cgroupRoots(s *state) ([]string, error) {
	ms, err := cgroupMounts()
	if err != nil {
		return nil, fmt.Errorf("cgroup mounts: %w", err)
	}
	var out []string
	for _, m := range ms {
		for _, n := range s.Nodes {
			out = append(out, filepath.Join(m, layout(s.Slot).cgroupRoot(n.Index)))
		}
	}
	return out, nil
}

// killAll kills the pool's processes until none is left: every process
// whose command line names a path in dir (containerd, its shims, the
// kubelets, kube-proxy, CoreDNS, the scheduler) and every process in the
// nodes' cgroups (the containers).
func killAll(ctx context.Context, dir string, roots []string) error {
	for {
		pids := append(pidsMentioning(dir+"/"), cgroupPids(roots)...)
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kill the pool's processes: %d left: %v", len(pids), pids)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// removeShimSockets removes the sockets of containerd's runc shims, which
// containerd 1.6 keeps under /run/containerd/s whatever its state dir; a
// shim killed leaves its socket. Each shim's bundle names its socket.
func removeShimSockets(dir string) error {
	addrs, _ := filepath.Glob(filepath.Join(dir, "*", "containerd", "state", "io.containerd.runtime.v2.task", "*", "*", "address"))
	var errs []error
	for _, a := range addrs {
		b, err := os.ReadFile(a)
		if err != nil {
			continue
		}
		sock := strings.TrimPrefix(strings.TrimSpace(string(b)), "unix://")
		if !strings.HasPrefix(sock, "/run/containerd/s/") {
			continue
		}
		if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unmountAll detaches every mount under dir (the kubelet's root bind
// mount and pod volumes, containerd's rootfs overlays and shm, the nodes'
// and pods' network namespace files), deepest first, until none is left.
func unmountAll(dir string) error {
	if dir == "" {
		return nil
	}
	for range 10 {
		ms, err := MountsUnder(dir)
		if err != nil {
			return fmt.Errorf("unmount under %s: %w", dir, err)
		}
		if len(ms) == 0 {
			return nil
		}
		for _, m := range ms {
			if err := detach(m); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				return fmt.Errorf("unmount %s: %w", m, err)
			}
		}
	}
	ms, _ := MountsUnder(dir)
	return fmt.Errorf("unmount under %s: still mounted: %v", dir, ms)
}

// removeCNICache removes the CNI result cache files of the pool's pod
// sandboxes from /var/lib/cni (libcni's cache dir, not configurable in
// containerd 1.6): those of its nodes' networks, and containerd's loopback
// ones of its sandboxes.
func removeCNICache(s *state) error {
	var files []string
	for _, n := range s.Nodes {
		f, _ := filepath.Glob(filepath.Join(cniResults, layout(s.Slot).cniNetwork(n.Index)+"-*"))
		files = append(files, f...)
	}
	for _, id := range sandboxIDs(s.Dir) {
		files = append(files, filepath.Join(cniResults, "cni-loopback-"+id+"-lo"))
	}
	var errs []error
	for _, f := range files {
		errs = append(errs, removeAll(f))
	}
	return errors.Join(errs...)
}

const cniResults = "/var/lib/cni/results"

// sandboxIDs lists the pod sandboxes containerd made on the pool's nodes.
func sandboxIDs(dir string) []string {
	var out []string
	for _, part := range []string{"root", "state"} {
		dirs, _ := filepath.Glob(filepath.Join(dir, "*", "containerd", part, "io.containerd.grpc.v1.cri", "sandboxes", "*"))
		for _, d := range dirs {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

// removeLogLinks removes the kubelet's links in /var/log/containers to
// container logs under dir.
func removeLogLinks(dir string) error {
	entries, _ := os.ReadDir("/var/log/containers")
	var errs []error
	for _, e := range entries {
		p := filepath.Join("/var/log/containers", e.Name())
		if t, err := os.Readlink(p); err == nil && strings.HasPrefix(t, dir+"/") {
			errs = append(errs, removeAll(p))
		}
	}
	return errors.Join(errs...)
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}
