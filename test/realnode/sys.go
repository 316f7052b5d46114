package realnode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// run runs a command and returns its error with its output.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// inNetns runs a command with its network in the namespace held by nsFile.
func inNetns(ctx context.Context, nsFile, name string, args ...string) error {
	return run(ctx, nsenter, append([]string{"--net=" + nsFile, "--", name}, args...)...)
}

// mountPoint is one line of /proc/self/mountinfo.
type mountPoint struct {
	path, fsType string
}

func mounts() ([]mountPoint, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountPoint
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mountPoint{path: unescapeMount(fields[4]), fsType: fields[sep+1]})
	}
	return out, sc.Err()
}

// unescapeMount decodes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MountsUnder lists the mount points at or under dir, deepest first.
func MountsUnder(dir string) ([]string, error) {
	all, err := mounts()
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var out []string
	for _, m := range all {
		if m.path == dir || strings.HasPrefix(m.path, prefix) {
			out = append(out, m.path)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// cgroupMounts are the mount points of the cgroup hierarchies (v1 and v2).
func cgroupMounts() ([]string, error) {
	all, err := mounts()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range all {
		if m.fsType == "cgroup" || m.fsType == "cgroup2" {
			out = append(out, m.path)
		}
	}
	return out, nil
}

// cgroupPids lists the processes in the cgroup trees at roots.
func cgroupPids(roots []string) []int {
	var out []int
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(path)
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	return out
}

// pidsMentioning lists the live processes (not zombies) whose command
// line contains s, this process excepted.
func pidsMentioning(s string) []int {
	entries, _ := os.ReadDir("/proc")
	me := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == me {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// removeCgroupTree removes the cgroup directory root and those below it,
// deepest first. Its processes must have exited.
func removeCgroupTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove cgroup %s: %w", root, err)
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if err := rmdirRetry(d); err != nil {
			return fmt.Errorf("remove cgroup %s: %w", d, err)
		}
	}
	return nil
}

// rmdirRetry removes an empty cgroup, retrying while the kernel still
// counts exiting processes in it.
func rmdirRetry(dir string) error {
	var err error
	for range 100 {
		if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

func removeAll(p string) error {
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}
